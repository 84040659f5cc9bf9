#include <catch2/catch.hpp>

#include <algorithm>

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
