// The example workflow (.github/workflows/roofline.yml, docs/ci.md) works as
// written against the committed files: its commands are read from the file,
// not copied here, and run on this machine. The CPU job runs whole; of the
// GPU job, the sweeps run as the model fallback (same axes, no GPU here) and
// must plan exactly the baseline's rows, and audit, gate and chart run on the
// baseline itself standing in for a new run, which must compare every row.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string tool = "./build/app/cuflash-roofline";

std::size_t indent_of(const std::string& line) {
  return line.find_first_not_of(' ');
}

// Job name -> its shell commands, in order. `run: X`, `run: |` (one command a
// line) and `run: >-` (lines folded into one command) are the forms the file
// uses.
std::map<std::string, std::vector<std::string>> workflow_commands(const std::string& path) {
  std::istringstream file(read_file(path));
  std::map<std::string, std::vector<std::string>> jobs;
  std::string job;
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.size() > 2 && indent_of(line) == 2 && line.back() == ':') {
      job = line.substr(2, line.size() - 3);
      continue;
    }
    const auto at = line.find("run: ");
    if (at == std::string::npos || line.find_first_not_of(" -") != at) continue;
    const std::string value = line.substr(at + 5);
    if (value != "|" && value != ">-") {
      jobs[job].push_back(value);
      continue;
    }
    std::string folded;
    while (i + 1 < lines.size() && !lines[i + 1].empty() && indent_of(lines[i + 1]) > at) {
      ++i;
      const std::string text = lines[i].substr(indent_of(lines[i]));
      if (value == "|") {
        jobs[job].push_back(text);
      } else {
        folded += (folded.empty() ? "" : " ") + text;
      }
    }
    if (value == ">-") jobs[job].push_back(folded);
  }
  return jobs;
}

// The tool's arguments, or empty when the command is not the tool.
std::vector<std::string> tool_arguments(const std::string& command) {
  std::vector<std::string> words = split_words(command);
  if (words.empty() || words[0] != tool) return {};
  words.erase(words.begin());
  return words;
}

using Identity = std::tuple<std::string, std::string, std::string, std::int64_t, std::int64_t,
                            std::int64_t, std::int64_t, bool>;

std::set<Identity> identities(const std::string& path) {
  std::set<Identity> out;
  const json document = json::parse(read_file(path));
  REQUIRE(!document["results"].empty());
  for (const json& row : document["results"]) {
    out.insert(Identity(row["kernel"].get<std::string>(), row["direction"].get<std::string>(),
                        row["dtype"].get<std::string>(), row["batch"].get<std::int64_t>(),
                        row["heads"].get<std::int64_t>(), row["seq_len"].get<std::int64_t>(),
                        row["head_dim"].get<std::int64_t>(), row["causal"].get<bool>()));
  }
  return out;
}

// A folder where the workflow's relative paths resolve: results/ is the
// source tree's, out/ is new.
struct Checkout {
  Checkout() {
    fs::create_directories(dir / "out");
    fs::create_directory_symlink(source_path("results"), dir / "results");
  }
  ~Checkout() { fs::remove_all(dir); }
  CliResult run(const std::vector<std::string>& arguments) const {
    CliLimits limits;
    limits.working_directory = dir.string();
    limits.timeout = std::chrono::seconds(60);
    return run_cli(arguments, limits);
  }
  const fs::path dir = temp_path("ci-workflow");
};

}  // namespace

TEST_CASE("ci workflow: the CPU job's commands run as written against the committed files") {
  const auto jobs = workflow_commands(source_path(".github/workflows/roofline.yml"));
  REQUIRE(jobs.count("cpu") == 1);
  const Checkout checkout;
  int tool_commands = 0;
  for (const std::string& command : jobs.at("cpu")) {
    const std::vector<std::string> arguments = tool_arguments(command);
    if (arguments.empty()) continue;
    ++tool_commands;
    INFO(command);
    const CliResult r = checkout.run(arguments);
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  // model, audit of it, audit of the baseline, the baseline's HTML page.
  CHECK(tool_commands == 4);
  CHECK(file_exists((checkout.dir / "out/h200-baseline.html").string()));
}

TEST_CASE("ci workflow: the GPU job sweeps the baseline's axes and its gate compares every row") {
  const auto jobs = workflow_commands(source_path(".github/workflows/roofline.yml"));
  REQUIRE(jobs.count("gpu") == 1);
  const Checkout checkout;
  std::map<std::string, std::string> baseline_of;  // out/X.json -> results/h200/X.json
  std::vector<std::vector<std::string>> after_sweeps;
  for (const std::string& command : jobs.at("gpu")) {
    std::vector<std::string> arguments = tool_arguments(command);
    if (arguments.empty() || arguments[0] == "ceilings") continue;
    INFO(command);
    if (arguments[0] != "sweep") {
      after_sweeps.push_back(arguments);
      continue;
    }
    // No GPU here: the same sweep without --require-gpu and on the H200
    // ceiling is the model of the same rows.
    std::erase(arguments, "--require-gpu");
    const auto gpu = std::find(arguments.begin(), arguments.end(), "auto");
    REQUIRE(gpu != arguments.end());
    *gpu = "h200";
    const auto json_at = std::find(arguments.begin(), arguments.end(), "--json");
    REQUIRE(json_at + 1 < arguments.end());
    const std::string out = *(json_at + 1);
    const std::string baseline = "results/h200/" + fs::path(out).filename().string();
    // Committed as sweep-*.json.gz (over 1 MiB: results/compress.sh); read by its .json name.
    REQUIRE((file_exists(source_path(baseline)) || file_exists(source_path(baseline) + ".gz")));
    const CliResult r = checkout.run(arguments);
    REQUIRE(r.exit_code == 0);
    CHECK(identities((checkout.dir / out).string()) == identities(source_path(baseline)));
    baseline_of[out] = baseline;
  }
  REQUIRE(baseline_of.size() == 2);
  // The baseline stands in for the new run (and the committed ceilings for
  // the new ones): the gate must pass and compare every row.
  for (const auto& [out, baseline] : baseline_of) {
    const std::string stored =
        file_exists(source_path(baseline)) ? source_path(baseline) : source_path(baseline) + ".gz";
    fs::copy_file(stored, checkout.dir / out, fs::copy_options::overwrite_existing);
  }
  fs::copy_file(source_path("results/h200/ceilings.json"), checkout.dir / "out/ceilings.json");
  int gates = 0;
  for (const std::vector<std::string>& arguments : after_sweeps) {
    INFO(arguments[0]);
    const CliResult r = checkout.run(arguments);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    if (arguments[0] != "compare") continue;
    ++gates;
    const json compared = json::parse(read_file((checkout.dir / "out/compare.json").string()));
    // 80 rows in each baseline file, fa3_wgmma, fa2_bwd and fa2_bwd_2d included
    CHECK(compared["rows_compared"] == 160);
    CHECK(compared["regression"] == false);
  }
  CHECK(gates == 1);
  CHECK(file_exists((checkout.dir / "out/roofline.svg").string()));
  CHECK(file_exists((checkout.dir / "out/causal.html").string()));
}
