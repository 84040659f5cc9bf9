// Numbers docs/perf-notes.md states about the committed H200 sweeps,
// recomputed from the reports' raw samples (issue 12: "a test or a generated
// section wherever a doc states a number").
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/report_json.hpp"
#include "roofline/statistics.hpp"

using namespace cfr;

namespace {

std::string read_text(const std::string& relative) {
  std::ifstream in(std::string(CFR_SOURCE_ROOT) + "/" + relative);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Noise {
  int rows = 0;
  int over_1_3_percent = 0;
  int time_cap = 0;
  double worst_percent = 0;
  std::string worst_row;
};

Noise noise_of(const std::string& report_path) {
  const Report report = report_from_json(nlohmann::json::parse(read_text(report_path)));
  Noise noise;
  for (const ResultRow& row : report.results) {
    if (!row.timing) continue;
    ++noise.rows;
    const double percent = 100 * summarize(row.timing->samples_ms).relative_stdev();
    if (percent > 1.3) ++noise.over_1_3_percent;
    if (row.timing->stop_reason == "time cap") ++noise.time_cap;
    if (percent > noise.worst_percent) {
      noise.worst_percent = percent;
      noise.worst_row =
          fmt::format("{} d {} N {}", row.kernel, row.problem.head_dim, row.problem.seq_len);
    }
  }
  return noise;
}

// The doc's sentence with its line breaks folded to spaces.
std::string folded(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace

TEST_CASE("perf-notes' noise figures of the version 1 sweeps are the reports' own") {
  const Noise causal = noise_of("results/h200/sweep-causal.json");
  const Noise non_causal = noise_of("results/h200/sweep-noncausal.json");
  CHECK(non_causal.over_1_3_percent == 0);
  const std::string notes = folded(read_text("docs/perf-notes.md"));
  const std::string expected = fmt::format(
      "is under 1 % in every non-causal row (at most {:.2f} %); in the causal report {} of {} rows "
      "exceed 1.3 % (at most {:.2f} %, {}) and {} of {} stopped on the time cap",
      non_causal.worst_percent, causal.over_1_3_percent, causal.rows, causal.worst_percent,
      "fa1_wmma d 64 N 4096", causal.time_cap, causal.rows);
  INFO(expected);
  CHECK(non_causal.worst_percent < 1.0);
  CHECK(causal.worst_row == "fa1_wmma d 64 N 4096");
  CHECK(notes.find(expected) != std::string::npos);
}
