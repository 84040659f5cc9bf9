// A ceilings report sits in a results folder beside the sweep reports
// (results/h200/): plot, compare and table recognise it by its schema
// (issue 12) instead of failing on it as a malformed sweep report; audit
// audits what a ceilings report holds.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tests/source_text.hpp"

using nlohmann::json;
using Words = std::vector<std::string>;

namespace {

const std::string ceilings = source_path("results/h200/ceilings.json");
const std::string causal = source_path("results/h200/sweep-causal.json");
const std::string noncausal = source_path("results/h200/sweep-noncausal.json");

// The committed report's own figures, so a re-measured file does not move the tests.
const json& committed() {
  static const json document = json::parse(read_file(ceilings));
  return document;
}

const json& committed_figure(const std::string& name) {
  for (const json& figure : committed()["figures"]) {
    if (figure["figure"] == name) return figure;
  }
  FAIL("no figure " << name << " in " << ceilings);
  throw;
}

}  // namespace

TEST_CASE("ceilings inputs: table prints a ceilings report's figures") {
  const CliResult r = run_cli(Words{"table", ceilings});
  REQUIRE(r.exit_code == 0);
  // results/h200/ceilings.json: dram_bandwidth's median against 4800 GB/s on the sheet.
  const double dram = committed_figure("dram_bandwidth")["value"].get<double>();
  CHECK(r.out.find("Measured ceilings of device 0 (NVIDIA H200)") != std::string::npos);
  const std::string line = fmt::format(
      "dram_bandwidth           {:.1f} GB/s         4800.0   {:.3f}", dram, dram / 4800);
  INFO(line);
  CHECK(r.out.find(line) != std::string::npos);
  const CliResult csv = run_cli(Words{"table", ceilings, "--format", "csv"});
  CHECK(csv.exit_code == 2);
  CHECK(csv.err.find("a ceilings report prints as one text table") != std::string::npos);
}

TEST_CASE("ceilings inputs: plot draws a ceilings report among the files as measured roofs") {
  const std::string svg = temp_path("ceilings-inputs.svg");
  const CliResult r = run_cli(Words{"plot", ceilings, causal, noncausal, "--out", svg});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(ceilings + ": a ceilings report, drawn as measured roofs") != std::string::npos);
  // 80 ok rows in each sweep file (every kernel, fa3_wgmma, fa2_bwd and fa2_bwd_2d included,
  // d 64 and 128, N 1024-16384).
  CHECK(r.out.find("160 measured points") != std::string::npos);
  const CliResult alone = run_cli(Words{"plot", ceilings, "--out", svg});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("plot needs at least one sweep or model report") != std::string::npos);
  std::remove(svg.c_str());
}

TEST_CASE("ceilings inputs: compare skips a pair of ceilings reports and says so") {
  const std::string results = source_path("results/h200");
  const std::string out = temp_path("ceilings-inputs-compare.json");
  const CliResult r =
      run_cli(Words{"compare", results, results, "--fail-on-regression", "--json", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(results + "/ceilings.json: a ceilings report, skipped") != std::string::npos);
  const json document = json::parse(read_file(out));
  CHECK(document["ceilings_skipped"] == json::array({results + "/ceilings.json"}));
  // Every timed row of the folder's sweep reports, each compared with itself.
  std::size_t timed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(results)) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const json report = json::parse(read_file(entry.path().string()));
    if (report["schema"] != "cuflash-roofline/report/v1") continue;
    for (const json& row : report["results"]) timed += row.contains("timing") ? 1 : 0;
  }
  CHECK(timed >= 100);  // sweep-causal.json and sweep-noncausal.json: 50 each
  CHECK(document["rows_compared"] == timed);
  const CliResult mixed = run_cli(Words{"compare", ceilings, causal});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("one is a ceilings report, the other a sweep report") != std::string::npos);
  const CliResult view = run_cli(Words{"compare", "--roofline", results});
  CHECK(view.exit_code == 0);
  CHECK(view.out.find("ceilings.json: a ceilings report, skipped") != std::string::npos);
  std::remove(out.c_str());
}

TEST_CASE("ceilings inputs: audit audits a ceilings report among the folder's reports") {
  // `audit results/h200/*.json` as a shell expands it: every report of the folder, sorted.
  Words command{"audit"};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("results/h200"))) {
    if (cfr::test::is_json_file(entry.path())) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  command.insert(command.end(), files.begin(), files.end());
  const std::string out = temp_path("ceilings-inputs-audit.json");
  command.insert(command.end(), {"--json", out});
  const CliResult r = run_cli(command);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // A median per figure and a fraction per figure with a datasheet value
  // (l2_bandwidth has none).
  const std::size_t measured = committed()["figures"].size();
  std::size_t fractions = 0;
  for (const json& figure : committed()["figures"]) {
    fractions +=
        figure.contains("fraction_of_datasheet") && !figure["fraction_of_datasheet"].is_null() ? 1
                                                                                               : 0;
  }
  CHECK(r.out.find(ceilings + ": consistent: " + std::to_string(measured) + " measurements, " +
                   std::to_string(measured + fractions) + " figures recomputed") !=
        std::string::npos);
  const json document = json::parse(read_file(out));
  CHECK(document["consistent"] == true);
  bool listed = false;
  for (const json& file : document["files"]) {
    if (file["file"] != ceilings) continue;
    listed = true;
    CHECK(file["schema"] == "cuflash-roofline/ceilings/v1");
    CHECK(file["rows"] == measured);
  }
  CHECK(listed);

  // A median edited by hand is a finding and fails the audit.
  json edited = json::parse(read_file(ceilings));
  edited["figures"][0]["value"] = 4000.0;
  const std::string tampered = temp_path("ceilings-tampered.json");
  std::ofstream(tampered) << edited.dump();
  const CliResult caught = run_cli(Words{"audit", tampered});
  CHECK(caught.exit_code == 1);
  const json& first = committed()["figures"][0];
  CHECK(caught.out.find(fmt::format("{}: mismatch: figures[0] ({}): value: report 4000, recomputed "
                                    "{:.10g} (the median of {} samples)",
                                    tampered, first["figure"].get<std::string>(),
                                    first["value"].get<double>(), first["samples"].size())) !=
        std::string::npos);
  CHECK(caught.out.find(tampered + ": INCONSISTENT: " + std::to_string(measured) +
                        " measurements") != std::string::npos);
  std::remove(out.c_str());
  std::remove(tampered.c_str());
}
