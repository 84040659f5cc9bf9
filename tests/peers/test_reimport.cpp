// Issue 21's acceptance: every peer report committed (results/, and the CPU
// fixture tests/peers/fixtures/), turned back into the raw samples it was
// computed from and re-imported through `import-samples`, is the same report:
// every key of the original is there with the same value, doubles bit for
// bit. The keys the re-import adds are the ones docs/peers.md lists, each
// with the value the original implies. The hand-built raw samples of served
// shapes (fixtures/) go round the same way: their report, re-imported, is
// itself.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "peer_fixture.hpp"
#include "raw_samples_of_report.hpp"
#include "roofline/report/report_json.hpp"
#include "tests/source_text.hpp"

using nlohmann::json;

namespace {

// Every report/v1 document under results/ written by a peer script, and the fixture.
std::vector<std::string> committed_peer_reports() {
  std::vector<std::string> paths{peer_fixture_path()};
  const std::filesystem::path results = source_path("results");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(results)) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const std::string text = read_file(entry.path().string());
    if (text.find("\"cuflash-roofline/peers/") == std::string::npos) continue;
    const json document = json::parse(text);
    if (document.value("schema", "") == "cuflash-roofline/report/v1" &&
        document["tool"]["name"].get<std::string>().starts_with("cuflash-roofline/peers/")) {
      paths.push_back(entry.path().string());
    }
  }
  return paths;
}

// "results[3].timing.kept_throttled" -> "results[].timing.kept_throttled"
std::string generic(const std::string& path) {
  std::string out;
  bool in_index = false;
  for (char c : path) {
    if (c == '[') in_index = true;
    if (!in_index || c == '[' || c == ']') out += c;
    if (c == ']') in_index = false;
  }
  return out;
}

// The keys import-samples writes that the peer reports recorded before them
// lack (docs/peers.md), with the value the rest of the object implies.
const std::map<std::string, std::function<json(const json& original_parent)>>& added_keys() {
  static const std::map<std::string, std::function<json(const json&)>> keys{
      {"ceiling.l2_bandwidth_GBps", [](const json&) { return json(nullptr); }},
      {"ceiling.read_bandwidth_GBps", [](const json&) { return json(nullptr); }},
      // without a read bandwidth every row is judged on the DRAM slope
      {"results[].memory_roof", [](const json&) { return json("dram"); }},
      {"results[].timing.throttle_threshold_percent", [](const json&) { return json(nullptr); }},
      // kept throttled samples make a row throttled; of an unthrottled row, false
      {"results[].timing.kept_throttled",
       [](const json& timing) {
         return timing.value("throttled", true) ? json("(not implied: a throttled row)")
                                                : json(false);
       }},
      // the L2-aware interval: a peer's row has no launches to simulate
      {"results[].ai_low", [](const json&) { return json(nullptr); }},
      {"results[].ai_high", [](const json&) { return json(nullptr); }},
      {"results[].interval_regime", [](const json&) { return json(nullptr); }},
      {"results[].traffic.dram_model", [](const json& traffic) { return traffic["model"]; }},
      {"results[].traffic.by_model",
       [](const json& traffic) {
         return json{{"compulsory", traffic["bytes"]}};
       }},
  };
  return keys;
}

// Every difference between the original and the re-import, one line each.
void differences(const json& original, const json& reimported, const std::string& path,
                 std::vector<std::string>& out) {
  if (original.is_object() && reimported.is_object()) {
    for (const auto& [key, value] : original.items()) {
      const std::string at = path.empty() ? key : path + "." + key;
      if (!reimported.contains(key)) {
        out.push_back(at + ": missing from the re-import");
      } else {
        differences(value, reimported[key], at, out);
      }
    }
    for (const auto& [key, value] : reimported.items()) {
      if (original.contains(key)) continue;
      const std::string at = path.empty() ? key : path + "." + key;
      const auto added = added_keys().find(generic(at));
      if (added == added_keys().end()) {
        out.push_back(at + ": added by the re-import, and not a key docs/peers.md lists");
      } else if (value != added->second(original)) {
        out.push_back(at + ": added as " + value.dump() + ", not " +
                      added->second(original).dump());
      }
    }
    return;
  }
  if (original.is_array() && reimported.is_array() && original.size() == reimported.size()) {
    for (std::size_t i = 0; i < original.size(); ++i) {
      differences(original[i], reimported[i], path + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  // nlohmann compares an integer with a float by value; doubles exactly.
  if (original != reimported) {
    out.push_back(path + ": " + original.dump() + " became " + reimported.dump());
  }
}

// The report import-samples computes from `inputs`, as the script has it do.
json imported(const Reimport& inputs, const std::string& name) {
  const std::string raw = temp_path(name + ".samples.json");
  const std::string out = temp_path(name + ".json");
  std::ofstream(raw) << cfr::evidence::to_json(inputs.raw).dump(2);
  std::vector<std::string> arguments{"import-samples", raw};
  arguments.insert(arguments.end(), inputs.options.begin(), inputs.options.end());
  arguments.insert(arguments.end(), {"--json", out});
  CliLimits limits;
  limits.working_directory = source_path("");  // the --gpu-table path is the report's
  const CliResult result = run_cli(arguments, limits);
  INFO(name << ": " << result.err);
  REQUIRE(result.exit_code <= 1);  // 1: a failed row, which the report records
  const json report = json::parse(read_file(out));
  std::filesystem::remove(raw);
  std::filesystem::remove(out);
  return report;
}

json reimport(const std::string& path, const std::string& name) {
  INFO(path);
  return imported(raw_samples_of_report(cfr::report_from_json(json::parse(read_file(path)))), name);
}

}  // namespace

TEST_CASE("every committed peer report re-imports through import-samples unchanged") {
  const std::vector<std::string> reports = committed_peer_reports();
  // the fixture and results/h200/peers/torch-sdpa.json at least
  CHECK(reports.size() >= 2);
  int index = 0;
  for (const std::string& path : reports) {
    INFO(path);
    const json original = json::parse(read_file(path));
    const json reimported = reimport(path, "peer-reimport-" + std::to_string(index++));
    std::vector<std::string> found;
    differences(original, reimported, "", found);
    for (const std::string& difference : found) INFO(difference);
    CHECK(found.empty());
    CHECK(reimported["results"].size() == original["results"].size());
  }
}

TEST_CASE("the raw samples taken out of a re-imported report are the ones put in") {
  const std::string path = source_path("results/h200/peers/torch-sdpa.json");
  const json first = cfr::evidence::to_json(
      raw_samples_of_report(cfr::report_from_json(json::parse(read_file(path)))).raw);
  const json reimported = reimport(path, "peer-reimport-twice");
  CHECK(cfr::evidence::to_json(raw_samples_of_report(cfr::report_from_json(reimported)).raw) ==
        first);
  // and they are raw: no figure of the report is in them
  const std::string text = first.dump();
  for (const char* figure : {"median_ms", "\"flops\"", "roof_TFLOPs", "achieved", "passed"}) {
    INFO(figure);
    CHECK(text.find(figure) == std::string::npos);
  }
}

TEST_CASE("the served raw samples' report re-imports unchanged, kv_len, kv_heads, page_size too") {
  const std::string path = temp_path("peer-served.json");
  const CliResult imported =
      run_cli({"import-samples", served_samples_path(), "--gpu", "h200", "--json", path});
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  const json original = json::parse(read_file(path));
  std::vector<std::string> found;
  differences(original, reimport(path, "peer-served-reimport"), "", found);
  for (const std::string& difference : found) INFO(difference);
  CHECK(found.empty());
  // every problem comes back as the raw samples gave it
  const json given = json::parse(read_file(served_samples_path()));
  const json back =
      cfr::evidence::to_json(raw_samples_of_report(cfr::report_from_json(original)).raw);
  REQUIRE(back["results"].size() == given["results"].size());
  for (std::size_t i = 0; i < given["results"].size(); ++i) {
    CHECK(back["results"][i]["problem"] == given["results"][i]["problem"]);
  }
  std::filesystem::remove(path);
}

TEST_CASE("a report whose ceiling came from a ceilings file cannot give its inputs back") {
  cfr::Report report = cfr::report_from_json(json::parse(read_file(peer_fixture_path())));
  report.ceiling.source = "measured";
  CHECK_THROWS_WITH(raw_samples_of_report(report),
                    "the ceiling is h200's measured: the file is not in the report");
}

TEST_CASE("a backward peer report re-imports unchanged, each row's direction too") {
  // The fixture's raw samples with every row's timing taken as the backward's.
  Reimport inputs =
      raw_samples_of_report(cfr::report_from_json(json::parse(read_file(peer_fixture_path()))));
  for (cfr::evidence::RawRow& row : inputs.raw.rows) row.direction = cfr::Direction::backward;
  const json original = imported(inputs, "peer-backward");
  for (const json& row : original["results"]) CHECK(row["direction"] == "backward");
  const std::string path = temp_path("peer-backward.json");
  std::ofstream(path) << original.dump(2);
  std::vector<std::string> found;
  differences(original, reimport(path, "peer-backward-reimport"), "", found);
  for (const std::string& difference : found) INFO(difference);
  CHECK(found.empty());
  std::filesystem::remove(path);
}
