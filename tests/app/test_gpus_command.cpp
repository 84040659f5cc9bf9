#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "cli_runner.hpp"

TEST_CASE("cli: --version and --help answer on every command") {
  const CliResult version = run_cli("--version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("0.1.0") != std::string::npos);
  for (const char* command : {"gpus", "model", "sweep", "ceilings", "audit", "compare", "plot",
                              "import-historical", "import-samples"}) {
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
  for (const char* id : {"v100", "a100", "h100", "h200", "rtx3060"})
    CHECK(r.out.find(id) != std::string::npos);
  CHECK(r.out.find("312 (153.0)") != std::string::npos);
  CHECK(r.out.find("31.4 (34.9)") != std::string::npos);
  CHECK(r.out.find("989.4 (295.3)") != std::string::npos);
}

TEST_CASE("cli: gpus --json - is machine-readable with ridges and sources") {
  const CliResult r = run_cli("gpus --json -");
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  REQUIRE(doc["gpus"].size() == 5);
  CHECK(doc["gpus"][1]["ridge_FLOP_per_byte"]["fp16_tensor"].get<double>() ==
        Approx(153.0).margin(0.05));
  CHECK(doc["gpus"][0]["peak_TFLOPs"]["bf16_tensor"].is_null());
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
  CHECK(doc["gpus"][2]["sources"]["peak_TFLOPs"]["fp16_tensor"].get<std::string>().find("H100") !=
        std::string::npos);
}

TEST_CASE("cli: --gpu-table errors name the file, the GPU and the field") {
  const std::string path = temp_path("table.json");
  {
    auto table =
        nlohmann::json::parse(read_file(std::string(CFR_SOURCE_ROOT) + "/configs/gpus.json"));
    table["gpus"][2]["peak_TFLOPs"]["fp32_simt"]["value"] = "sixty";
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
