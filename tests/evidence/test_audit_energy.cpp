// audit over a row's energy (issue 20): J per launch, FLOP per joule and the
// other energy figures are re-derived from the kept counter readings, so an
// edited reading or launch count is caught (an edited figure: the figure walk
// of test_audit_figures.cpp); readings that give no figures beside figures are
// a mismatch. The readings are tests/roofline/energy_readings.hpp's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"
#include "sample_reports.hpp"
#include "tests/roofline/energy_readings.hpp"

using namespace cfr;
using namespace cfr::evidence;
using nlohmann::json;

namespace {

// every_kernel_report, whose fa2_mma row has its energy measured, with that
// row first.
json energy_document() {
  Report report = every_kernel_report();
  const auto row = std::find_if(report.results.begin(), report.results.end(),
                                [](const ResultRow& r) { return r.energy.has_value(); });
  REQUIRE(row != report.results.end());
  std::iter_swap(report.results.begin(), row);
  return to_json(report);
}

bool mismatch_at(const AuditResult& result, std::string_view key) {
  for (const Finding& f : result.findings) {
    if (f.kind == FindingKind::mismatch && f.where.starts_with("results[0] ") &&
        f.message.starts_with(key)) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("audit: a row's energy figures agree with its readings") {
  const AuditResult result = audit_report(report_from_json(energy_document()));
  INFO(render_audit(result, "energy.json"));
  CHECK(result.consistent());
}

TEST_CASE("audit: an edited reading or launch count moves J/launch and FLOP/J") {
  json document = energy_document();
  document["results"][0]["energy"]["launches"] = 3000;
  AuditResult result = audit_report(report_from_json(document));
  CHECK(mismatch_at(result, "energy.joules_per_launch"));
  CHECK(mismatch_at(result, "energy.flop_per_J"));

  document = energy_document();
  json& last = document["results"][0]["energy"]["readings"].back();
  last[1] = last[1].get<std::uint64_t>() + 500000;  // 500 J more at the end
  result = audit_report(report_from_json(document));
  CHECK(mismatch_at(result, "energy.joules_per_launch"));
  CHECK(mismatch_at(result, "energy.average_W"));
}

TEST_CASE("audit: figures beside readings that give none are a mismatch") {
  json document = energy_document();
  json& readings = document["results"][0]["energy"]["readings"];
  readings = json::array({readings.front(), readings.back()});  // one change: stalled
  const AuditResult result = audit_report(report_from_json(document));
  CHECK(mismatch_at(result, "energy: figures reported, but energy counter stalled"));
}
