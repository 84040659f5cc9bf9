// nvbench's habits, which its users bring (issue 12): --max-noise in percent,
// START:END ranges stepping by +1 and the [pow2] form, --list of kernels,
// --json stdout.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tests/builtin_kernels.hpp"

using nlohmann::json;
using Words = std::vector<std::string>;

TEST_CASE("nvbench habits: --list prints every kernel --kernels takes, and exits 0") {
  // app/plugin_options: one line per kernel, its name first (plugins add theirs).
  const CliResult r = run_cli(Words{"sweep", "--list"});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line);)
    names.push_back(line.substr(0, line.find(' ')));
  // roofline/model/kernel_catalog.hpp: its forward kernels, then its backward ones.
  CHECK(names == cfr::test::builtin_kernel_names());
  for (const std::string& name : names) {
    INFO(name);
    CHECK(run_cli(Words{"model", "--kernels", name, "--seq-lens", "1024"}).exit_code == 0);
  }
  // The same list from `model`, and nothing is modelled.
  CHECK(run_cli(Words{"model", "--list"}).out == r.out);
}

TEST_CASE("nvbench habits: --max-noise is a percentage, as in nvbench") {
  // 0.5 means 0.5 %, not 50 %: 100 is the largest value, 101 is refused.
  const CliResult help = run_cli(Words{"sweep", "--help"});
  CHECK(help.out.find("--max-noise PERCENT:[0, 100]=0.5") != std::string::npos);
  CHECK(run_cli(Words{"sweep", "--gpu", "h200", "--seq-lens", "1024", "--max-noise", "100"})
            .exit_code == 0);
  const CliResult over = run_cli(Words{"sweep", "--max-noise", "101"});
  CHECK(over.exit_code == 2);
  CHECK(over.err.find("--max-noise") != std::string::npos);
}

TEST_CASE(
    "nvbench habits: --throttle-threshold is a percentage of the max SM clock, 75 by default") {
  const CliResult help = run_cli(Words{"sweep", "--help"});
  CHECK(help.out.find("--throttle-threshold PERCENT:[0, 100]=75") != std::string::npos);
  for (const char* bad : {"101", "-1", "nan", "inf", "75%"}) {
    INFO(bad);
    const CliResult r = run_cli(Words{"sweep", "--throttle-threshold", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--throttle-threshold") != std::string::npos);
  }
}

TEST_CASE("nvbench habits: ranges without a step, the pow2 form and --json stdout") {
  const CliResult r = run_cli(
      Words{"model", "--kernels", "naive", "--seq-lens", "1:3,[pow2]10:11", "--json", "stdout"});
  REQUIRE(r.exit_code == 0);
  std::vector<std::int64_t> seq_lens;
  const json document = json::parse(r.out);
  for (const json& row : document["results"]) seq_lens.push_back(row["seq_len"]);
  CHECK(seq_lens == std::vector<std::int64_t>{1, 2, 3, 1024, 2048});
}
