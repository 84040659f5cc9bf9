// The README's "Exit codes" table is the interface: every code it lists is
// one that app/commands.hpp defines, and each (but 130) is produced here by a
// command the table's row describes. 130 needs a sweep interrupted on a GPU:
// tests/gpu/device_run.sh `cli` sends SIGINT mid-sweep and prints the exit.
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_runner.hpp"

namespace {

using Words = std::vector<std::string>;

// code -> meaning, from the table under "## Exit codes".
std::map<int, std::string> readme_exit_codes() {
  std::istringstream readme(read_file(source_path("README.md")));
  std::map<int, std::string> codes;
  bool inside = false;
  const std::regex row(R"(^\| (\d+) \| (.+) \|$)");
  for (std::string line; std::getline(readme, line);) {
    if (line.starts_with("## ")) inside = line == "## Exit codes";
    std::smatch match;
    if (inside && std::regex_match(line, match, row)) codes[std::stoi(match[1])] = match[2];
  }
  return codes;
}

}  // namespace

TEST_CASE("exit codes: the README's table lists exactly the codes the tool uses") {
  const std::map<int, std::string> codes = readme_exit_codes();
  std::vector<int> listed;
  for (const auto& [code, meaning] : codes) listed.push_back(code);
  // app/commands.hpp, namespace exit_code.
  CHECK(listed == std::vector<int>{0, 1, 2, 3, 130});
}

TEST_CASE("exit codes: each code of the table comes from the commands its row names") {
  // 0: a command that succeeds.
  CHECK(run_cli(Words{"gpus"}).exit_code == 0);
  CHECK(run_cli(Words{"--version"}).exit_code == 0);
  CHECK(run_cli(Words{"model", "--help"}).exit_code == 0);
  // 1: compare --fail-on-regression on two model reports compares no row.
  const std::string report = temp_path("exit-codes-model.json");
  REQUIRE(run_cli(Words{"model", "--gpu", "a100", "--json", report}).exit_code == 0);
  CHECK(run_cli(Words{"compare", report, report, "--allow-unauditable", "--fail-on-regression"})
            .exit_code == 1);
  // 2: every kind of usage error, CLI11's own included (it used 105..115).
  for (const std::vector<std::string>& usage :
       std::vector<std::vector<std::string>>{{"frobnicate"},
                                             {},
                                             {"model", "--bogus"},
                                             {"model", "--seq-lens"},
                                             {"model", "--causal", "--both"},
                                             {"sweep", "--max-noise", "nan"},
                                             {"table"},
                                             {"audit", "/nonexistent.json"},
                                             {"model", "--json", "/nonexistent/dir/r.json"}}) {
    INFO((usage.empty() ? std::string("(no arguments)") : usage[0]));
    const CliResult r = run_cli(usage);
    CHECK(r.exit_code == 2);
    CHECK(r.err.starts_with("cuflash-roofline: error: "));
  }
  // 3: a command that must measure, on a machine without a CUDA device.
  const CliResult ceilings = run_cli(Words{"ceilings"});
  CHECK(ceilings.exit_code == 3);
  CHECK(ceilings.err ==
        "cuflash-roofline: error: ceilings needs a CUDA device; none on this "
        "machine\n");
  CHECK(run_cli(Words{"sweep", "--gpu", "a100", "--require-gpu"}).exit_code == 3);
  std::remove(report.c_str());
}
