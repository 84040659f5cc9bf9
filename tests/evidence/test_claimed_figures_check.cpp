#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "roofline/evidence/claimed_figures_check.hpp"
#include "roofline/report/row_model.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

double rounded(double x, int decimals) {
  const double unit = std::pow(10.0, decimals);
  return std::round(x * unit) / unit;
}

// fa1_wmma, B=1 H=8 N=4096 d=64 causal on the H200 datasheet, with printed
// columns that follow from one another and from our models, rounded as a
// table would print them.
ResultRow consistent_row() {
  ResultRow row = model_row(fa1_wmma_kernel, {1, 8, 4096, 64, true, DType::fp16}, h200_datasheet(),
                            FlopConvention::exact);
  ClaimedFigures c;
  c.time_ms = 2.5;
  c.flops_G = rounded(row.model->flops.exact / 1e9, 4);
  c.TFLOPs = rounded(c.flops_G / c.time_ms, 3);
  c.traffic_GB = rounded(row.model->traffic.bytes / 1e9, 4);
  c.bandwidth_GBps = rounded(c.traffic_GB / c.time_ms * 1e3, 1);
  c.bandwidth_utilization_percent = rounded(c.bandwidth_GBps / 4800 * 100, 2);
  c.ai_eff = rounded(c.TFLOPs / c.bandwidth_GBps * 1e3, 2);
  c.regime = "memory-bound";
  c.ridge_distance = rounded(row.model->roofline->ridge / c.ai_eff, 2);
  row.claimed = c;
  return row;
}

std::vector<std::string> check(const ResultRow& row) {
  std::vector<std::string> out;
  for (const Finding& f : check_claimed_figures(row, h200_datasheet(), "results[0]")) {
    CHECK(f.kind == FindingKind::claim);
    CHECK(f.where == "results[0]");
    out.push_back(f.message.substr(0, f.message.find(':')));
  }
  return out;
}

}  // namespace

TEST_CASE("printed columns that follow from each other and our models raise nothing") {
  CHECK(check(consistent_row()).empty());
  ResultRow no_claims = consistent_row();
  no_claims.claimed.reset();
  CHECK(check(no_claims).empty());
}

TEST_CASE("each printed column that breaks its relation is named") {
  ResultRow tflops = consistent_row();
  tflops.claimed->TFLOPs *= 2;  // no longer FLOPs / time, nor TFLOPS / bandwidth = AI_eff
  CHECK(check(tflops) == std::vector<std::string>{"TFLOPs", "ai_eff"});

  ResultRow traffic = consistent_row();
  traffic.claimed->traffic_GB *= 3;  // no model, nor bandwidth x time, nor FLOPs / AI_eff
  CHECK(check(traffic) == std::vector<std::string>{"traffic_GB", "bandwidth_GBps", "ai_eff"});

  ResultRow utilization = consistent_row();
  utilization.claimed->bandwidth_utilization_percent += 5;
  CHECK(check(utilization) == std::vector<std::string>{"bandwidth_utilization_percent"});

  ResultRow ridge = consistent_row();
  ridge.claimed->ridge_distance *= 4;
  CHECK(check(ridge) == std::vector<std::string>{"ridge_distance"});

  ResultRow regime = consistent_row();
  regime.claimed->regime = "compute-bound";
  CHECK(check(regime) == std::vector<std::string>{"regime"});

  ResultRow fast = consistent_row();  // faster than bytes / bandwidth allows
  fast.claimed->time_ms = fast.model->roofline->roof_time_ms / 2;
  const auto fast_findings = check(fast);
  CHECK(std::find(fast_findings.begin(), fast_findings.end(), "time_ms") != fast_findings.end());
}

TEST_CASE("FLOPs that match no convention are named with all three counts") {
  ResultRow row = consistent_row();
  row.claimed->flops_G = 1;
  const auto findings = check_claimed_figures(row, h200_datasheet(), "results[0]");
  REQUIRE_FALSE(findings.empty());
  CHECK(
      findings[0].message.starts_with("flops_G: 1 GFLOP matches none of our counts: dense 34.36"));
}
