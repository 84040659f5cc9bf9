#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "cli_runner.hpp"
#include "tests/shipped_gpus.hpp"

using namespace cfr::test;

TEST_CASE("cli: --version and --help answer on every command") {
  const CliResult version = run_cli("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("0.1.0") != std::string::npos);
  for (const char* command : {"gpus", "model", "sweep", "ceilings", "audit", "compare", "plot",
                              "report", "import-historical", "import-samples"}) {
    INFO(command);
    const CliResult help = run_cli(std::string(command) + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("--help") != std::string::npos);
    CHECK(run_cli(std::string(command) + " --version").exit_code == 0);
  }
}

TEST_CASE("cli: gpus prints every row with its ridge points (A100 fp16 tensor 153.0)") {
  const CliResult r = run_cli("gpus");
  REQUIRE(r.exit_code == 0);
  for (const std::string& id : shipped_gpu_ids())
    CHECK(r.out.find("\n" + id + " ") != std::string::npos);
  CHECK(r.out.find("312 (153.0)") != std::string::npos);
  CHECK(r.out.find("31.4 (34.9)") != std::string::npos);
  CHECK(r.out.find("989.4 (295.3)") != std::string::npos);
}

TEST_CASE("cli: gpus --json - is machine-readable with ridges and sources") {
  const CliResult r = run_cli("gpus --json -");
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["gpus"].size() == shipped_gpu_table()["gpus"].size());
  CHECK(gpu_row(doc, "a100")["ridge_FLOP_per_byte"]["fp16_tensor"].get<double>() ==
        Approx(153.0).margin(0.05));
  CHECK(gpu_row(doc, "v100")["peak_TFLOPs"]["bf16_tensor"].is_null());
  // docs/model.md §5: every figure's source, not the bandwidth's alone (issue 12); a unit the
  // GPU lacks (V100 bf16) has no figure and no source.
  for (const auto& gpu : doc["gpus"]) {
    INFO(gpu["id"].get<std::string>());
    const auto& sources = gpu["sources"];
    for (const char* figure : {"compute_capability", "sm_count", "l2_bytes",
                               "shared_memory_per_sm_bytes", "bandwidth_GBps"}) {
      INFO(figure);
      CHECK_FALSE(sources[figure].get<std::string>().empty());
    }
    for (const auto& [unit, peak] : gpu["peak_TFLOPs"].items()) {
      INFO(unit);
      CHECK(sources["peak_TFLOPs"][unit].is_null() == peak.is_null());
    }
  }
  CHECK(gpu_row(doc, "h100")["sources"]["peak_TFLOPs"]["fp16_tensor"].get<std::string>().find(
            "H100") != std::string::npos);
  // The measured loop the L2 keeps whole, where the table has one, with its source.
  CHECK(gpu_row(doc, "h100")["l2_loop_kept_bytes"] == 23068672.0);
  CHECK(gpu_row(doc, "h100")["sources"]["l2_loop_kept_bytes"].get<std::string>().find(
            "results/h100/l2-loop-") != std::string::npos);
  CHECK_FALSE(gpu_row(doc, "a100").contains("l2_loop_kept_bytes"));
}

TEST_CASE("cli: --gpu-table errors name the file, the GPU and the field") {
  const std::string path = temp_path("table.json");
  {
    nlohmann::json table = shipped_gpu_table();
    gpu_row(table, "h100")["peak_TFLOPs"]["fp32_simt"]["value"] = "sixty";
    std::ofstream(path) << table.dump();
  }
  const CliResult r = run_cli("gpus --gpu-table " + path);
  CHECK(r.exit_code != 0);
  CHECK(r.err == "cuflash-roofline: error: " + path +
                     ": gpu 'h100': field 'peak_TFLOPs.fp32_simt.value' is not a number\n");
  const CliResult missing = run_cli("model --gpu-table /nonexistent/table.json");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err ==
        "cuflash-roofline: error: /nonexistent/table.json: cannot open (missing or unreadable)\n");
  std::remove(path.c_str());
}

namespace {

// configs/gpus.json with a made-up GPU added (shipped_gpus.hpp), as a file.
std::string table_with_new_gpu() {
  const std::string path = temp_path("gpus-plus-one.json");
  std::ofstream(path) << table_with_made_up_gpu().dump(2);
  return path;
}

}  // namespace

TEST_CASE(
    "cli: a new GPU is one entry of the table, and every command that lists or picks GPUs "
    "has it") {
  const std::string table = table_with_new_gpu();
  const std::string with_table = " --gpu-table " + table;
  // gpus: the row with its ridge (989.4 TFLOPS / 8000 GB/s = 123.7) and its sources.
  const CliResult listed_rows = run_cli("gpus" + with_table);
  REQUIRE(listed_rows.exit_code == 0);
  CHECK(listed_rows.out.find("\nzz9000 ") != std::string::npos);
  CHECK(listed_rows.out.find("989.4 (123.7)") != std::string::npos);
  const CliResult json_rows = run_cli("gpus --json -" + with_table);
  REQUIRE(json_rows.exit_code == 0);
  const auto doc = nlohmann::json::parse(json_rows.out);
  REQUIRE(doc["gpus"].size() == shipped_gpu_ids().size() + 1);
  CHECK(doc["gpus"].back()["sources"]["bandwidth_GBps"] == "a test's made-up datasheet");
  // model and sweep (no device here: a projection) take it as --gpu.
  for (const char* command : {"model", "sweep"}) {
    INFO(command);
    const std::string out = temp_path(std::string(command) + "-zz9000.json");
    const CliResult r =
        run_cli(std::string(command) + " --gpu zz9000 --seq-lens 1024 --json " + out + with_table);
    REQUIRE(r.exit_code == 0);
    const auto report = nlohmann::json::parse(read_file(out));
    CHECK(report["ceiling"]["gpu"] == "zz9000");
    CHECK(report["ceiling"]["bandwidth_GBps"] == 8000);
    CHECK(report["ceiling"]["source_detail"].get<std::string>().starts_with(table));
  }
  // import-samples judges a peer's samples against it (--plan checks the ceiling options).
  CHECK(run_cli("import-samples --plan --gpu zz9000" + with_table).exit_code == 0);
  // An unknown id is refused with the table's ids, the new one with them.
  std::vector<std::string> ids = shipped_gpu_ids();
  ids.push_back("zz9000");
  for (const char* command : {"model", "import-samples --plan"}) {
    INFO(command);
    const CliResult unknown = run_cli(std::string(command) + " --gpu b200" + with_table);
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.err.find("known: " + listed(ids) + ", auto") != std::string::npos);
  }
  // import-historical finds a document's GPU by its id.
  nlohmann::json historical =
      nlohmann::json::parse(read_file(source_path("configs/historical/v0.4.0.json")));
  nlohmann::json rows = nlohmann::json::array();
  for (auto row : historical["rows"]) {
    if (row["gpu"] != "V100") continue;
    row["gpu"] = "ZZ9000";
    rows.push_back(row);
  }
  historical["rows"] = rows;
  const std::string document = temp_path("historical-zz9000.json");
  std::ofstream(document) << historical.dump();
  const std::string imported = temp_path("historical-zz9000-report.json");
  const CliResult import =
      run_cli("import-historical " + document + " --gpu ZZ9000 --out " + imported + with_table);
  REQUIRE(import.exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(imported))["ceiling"]["gpu"] == "zz9000");
  std::remove(table.c_str());
  std::remove(document.c_str());
}
