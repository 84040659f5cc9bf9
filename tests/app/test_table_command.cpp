#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cli_runner.hpp"

TEST_CASE("cli: table renders a saved report with chosen columns, as Markdown") {
  const std::string path = temp_path("table-model.json");
  REQUIRE(run_cli("model --gpu h200 --seq-lens 1024,16384 --kernels fa1_wmma --json " + path)
              .exit_code == 0);
  const CliResult r = run_cli("table " + path + " --format md --columns kernel,N,AI,regime");
  REQUIRE(r.exit_code == 0);
  // AI over the L2-aware DRAM bytes (the GPU table's 60 MiB L2): K and V of the 8 heads fit,
  // so DRAM sees about the compulsory bytes and the row is compute-bound (over kv_reload's
  // bytes, the L2->SM count, the AI would be 63.7 and memory-bound).
  CHECK(r.out.rfind("| kernel   | N     | AI     | regime        |", 0) == 0);
  CHECK(r.out.find("| fa1_wmma | 16384 | 9106.8 | compute-bound |") != std::string::npos);
  CHECK(r.out.find("auditable: false") != std::string::npos);  // the legend says what it is
  CHECK(run_cli("table " + path + " --no-legend").out.find("auditable") == std::string::npos);
}

TEST_CASE("cli: table fails with one line for an unknown column or an unusable file") {
  const std::string path = temp_path("table-model-2.json");
  REQUIRE(run_cli("model --seq-lens 1024 --json " + path).exit_code == 0);
  const CliResult column = run_cli("table " + path + " --columns kernel,speed");
  CHECK(column.exit_code == 2);
  CHECK(column.err.rfind("cuflash-roofline: error: --columns: unknown column 'speed'", 0) == 0);
  CHECK(std::count(column.err.begin(), column.err.end(), '\n') == 1);
  const CliResult missing = run_cli("table " + temp_path("no-such-report.json"));
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("no-such-report.json: cannot open") != std::string::npos);
  CHECK(missing.out.empty());
}

TEST_CASE("cli: --help of every command shows no CLI11 internals") {
  // Issue 12: `ENUM:value in {csv->2,md->1,text->0}` and `--no-legend{false}`.
  for (const char* command : {"gpus", "model", "sweep", "ceilings", "table", "audit", "compare",
                              "plot", "report", "import-historical", "import-samples"}) {
    INFO(command);
    const CliResult r = run_cli(std::string(command) + " --help");
    REQUIRE(r.exit_code == 0);
    for (const char* internal : {"ENUM", "{false}", "{true}", "->0", "->1", "->2", "OR {"}) {
      INFO(internal);
      CHECK(r.out.find(internal) == std::string::npos);
    }
  }
}

TEST_CASE("cli: table --columns takes blanks around names, --format any case") {
  // Issue 12: --columns 'kernel, N' failed on the space.
  const std::string report = source_path("results/h200/sweep-causal.json");
  const CliResult r = run_cli({"table", report, "--columns", "kernel, N", "--format", "CSV"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("kernel,N\nnaive,1024\n"));
  const CliResult empty = run_cli({"table", report, "--columns", "kernel,,N"});
  CHECK(empty.exit_code == 2);
  CHECK(empty.err == "cuflash-roofline: error: --columns: empty item in 'kernel,,N'\n");
}

TEST_CASE("cli: compare --figures takes blanks around tags, as --columns does") {
  // Issue 12's leftover: --figures 'a, b' named ' b' an unknown figure.
  const std::string report = source_path("results/h200/sweep-causal.json");
  const CliResult r = run_cli(
      {"compare", report, report, "--figures", "achieved/TFLOPs, achieved/fraction_of_roof"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("TFLOPS") != std::string::npos);
  CHECK(r.out.find("% roof") != std::string::npos);
  const CliResult bad = run_cli({"compare", report, report, "--figures", "achieved/TFLOPs, nope"});
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("unknown figure 'nope'") != std::string::npos);
}

TEST_CASE("cli: the README's column definitions are the tool's legend lines") {
  // README "Reading a table" lists "- LABEL: definition" lines; each must be
  // the legend line `table` prints for that column.
  const std::string readme = read_file(source_path("README.md"));
  const auto start = readme.find("## Reading a table");
  REQUIRE(start != std::string::npos);
  const std::string section = readme.substr(start, readme.find("\n## ", start + 1) - start);
  std::vector<std::string> definitions;
  for (std::size_t at = section.find("\n- "); at != std::string::npos;
       at = section.find("\n- ", at + 1)) {
    definitions.push_back(section.substr(at + 3, section.find('\n', at + 1) - at - 3));
  }
  REQUIRE(definitions.size() == 5);
  const CliResult r = run_cli({"table", source_path("results/h200/sweep-causal.json"), "--columns",
                               "% roof,% BW,check,noise %,n"});
  REQUIRE(r.exit_code == 0);
  for (const std::string& line : definitions) {
    INFO(line);
    CHECK(r.out.find("\n" + line + "\n") != std::string::npos);
  }
}

TEST_CASE("cli: figure-table prints the schema page's figure table, and is not a listed command") {
  // docs/update-figure-table.sh splices this output between the page's markers.
  const CliResult r = run_cli("figure-table");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("| tag | key | unit | `table` column |"));
  const std::string schema = read_file(source_path("docs/report-schema.md"));
  const std::string begin =
      "<!-- figures:begin (generated by docs/update-figure-table.sh; do not edit) -->\n";
  CHECK(schema.find(begin + r.out + "<!-- figures:end -->") != std::string::npos);
  const CliResult unknown = run_cli("figures");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown command 'figures' (commands: ") != std::string::npos);
  CHECK(unknown.err.find("figure-table") == std::string::npos);  // hidden, as profile-child
}
