// `audit` of a ceilings report (roofline/evidence/ceilings_audit): the
// committed results/h200/ceilings.json is consistent, and each kind of edit
// to it is caught by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/evidence/ceilings_audit.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

CeilingsReport committed_ceilings() {
  std::ifstream in(source_path("results/h200/ceilings.json"));
  std::stringstream text;
  text << in.rdbuf();
  return ceilings_from_json(nlohmann::json::parse(text.str()));
}

bool has_finding(const AuditResult& result, FindingKind kind, std::string_view where,
                 std::string_view message_start) {
  return std::any_of(result.findings.begin(), result.findings.end(), [&](const Finding& f) {
    return f.kind == kind && f.where == where && f.message.starts_with(message_start);
  });
}

}  // namespace

TEST_CASE("ceilings audit: the committed H200 ceilings are consistent") {
  const CeilingsReport committed = committed_ceilings();
  const AuditResult result = audit_ceilings(committed);
  CHECK(result.consistent());
  CHECK(result.findings.empty());
  CHECK(result.rows == committed.figures.size());
  CHECK(result.rows_are == "measurements");
  // A median per figure, and a fraction of the datasheet per figure that has
  // a datasheet value (l2_bandwidth has none).
  const auto with_sheet =
      std::count_if(committed.figures.begin(), committed.figures.end(),
                    [](const auto& f) { return f.datasheet_value.has_value(); });
  CHECK(result.figures_checked == committed.figures.size() + static_cast<std::size_t>(with_sheet));
}

TEST_CASE("ceilings audit: an edited value or fraction is a mismatch naming the figure") {
  const CeilingsReport committed = committed_ceilings();
  const auto at = [&](std::string_view name) {
    const auto found = std::find_if(committed.figures.begin(), committed.figures.end(),
                                    [&](const auto& f) { return f.figure == name; });
    REQUIRE(found != committed.figures.end());
    return static_cast<std::size_t>(found - committed.figures.begin());
  };
  const std::size_t dram = at("dram_bandwidth");
  const std::size_t cublas = at("fp16_tensor_cublas");
  const std::size_t l2 = at("l2_bandwidth");
  CeilingsReport edited = committed;
  edited.figures[dram].value *= 1.01;  // no longer the median of its samples
  edited.figures[cublas].reported_fraction_of_datasheet = 0.9;
  edited.figures[l2].reported_fraction_of_datasheet = 0.5;  // l2_bandwidth has no datasheet value
  const AuditResult result = audit_ceilings(edited);
  CHECK_FALSE(result.consistent());
  const auto& d = committed.figures[dram];
  CHECK(has_finding(
      result, FindingKind::mismatch, fmt::format("figures[{}] (dram_bandwidth)", dram),
      fmt::format("value: report {:.10g}, recomputed {:.10g} (the median of {} samples)",
                  d.value * 1.01, d.value, d.samples.size())));
  const auto& c = committed.figures[cublas];
  CHECK(has_finding(result, FindingKind::mismatch,
                    fmt::format("figures[{}] (fp16_tensor_cublas)", cublas),
                    fmt::format("fraction_of_datasheet: report 0.9, recomputed {:.10g}",
                                c.value / *c.datasheet_value)));
  CHECK(has_finding(result, FindingKind::mismatch, fmt::format("figures[{}] (l2_bandwidth)", l2),
                    "fraction_of_datasheet: report 0.5, recomputed absent"));
}

TEST_CASE("ceilings audit: the auditable flag is re-derived, in both directions") {
  CeilingsReport no_samples = committed_ceilings();
  no_samples.figures[1].samples.clear();
  const AuditResult unbacked = audit_ceilings(no_samples);
  CHECK(has_finding(unbacked, FindingKind::unverifiable, "figures[1] (dram_bandwidth_memcpy)",
                    "samples: none"));
  CHECK(has_finding(unbacked, FindingKind::auditability, "report",
                    "provenance.auditable is true, but figures[1] (dram_bandwidth_memcpy) has no "
                    "raw samples"));

  CeilingsReport dirty = committed_ceilings();
  dirty.tool.git_dirty = true;
  dirty.device.pci_bus_id.clear();
  const AuditResult flagged = audit_ceilings(dirty);
  CHECK(has_finding(flagged, FindingKind::auditability, "report",
                    "provenance.auditable is true, but built from a dirty tree"));
  CHECK(has_finding(flagged, FindingKind::auditability, "report",
                    "provenance.auditable is true, but device 0 record is incomplete"));

  // Flipped the other way: false with no reason, while every condition holds.
  CeilingsReport modest = committed_ceilings();
  modest.provenance.auditable = false;
  CHECK(has_finding(audit_ceilings(modest), FindingKind::auditability, "report",
                    "provenance.auditable is false and gives no reason"));
  // False with its reason is honest: a note.
  modest.provenance.reasons = {"built from a dirty tree"};
  CHECK(audit_ceilings(modest).consistent());
}

// The energy of every figure (`ceilings --energy`) on sample_reports'
// energy_ceilings(): its figures re-derived from the kept readings, so an
// edited figure, reading, launch count or work per launch is caught by name.
// Figures are found by name: the committed file they start from is re-measured.
namespace {

std::size_t index_of(const CeilingsReport& report, std::string_view figure) {
  const CeilingFigure* found = report.find(figure);
  REQUIRE(found != nullptr);
  return static_cast<std::size_t>(found - report.figures.data());
}

std::string where(const CeilingsReport& report, std::string_view figure) {
  return fmt::format("figures[{}] ({})", index_of(report, figure), figure);
}

}  // namespace

TEST_CASE("ceilings audit: each figure's energy agrees with its readings") {
  const CeilingsReport report = energy_ceilings();
  const AuditResult result = audit_ceilings(report);
  CHECK(result.consistent());
  // The values and fractions, and each figure's 11 energy figures.
  CHECK(result.figures_checked == audit_ceilings(committed_ceilings()).figures_checked +
                                      report.figures.size() * ceiling_energy_fields().size());
}

TEST_CASE("ceilings audit: a tampered energy figure or reading is a mismatch naming its key") {
  const CeilingsReport report = energy_ceilings();
  nlohmann::json document = to_json(report);
  document["figures"][index_of(report, "dram_bandwidth")]["energy"]["bytes_per_J"] = 9e9;
  // 1500 launches at 690 W for 3 s: 1.38 J each; twice the launches, half the joules.
  document["figures"][index_of(report, "fp16_tensor_cublas")]["energy"]["launches"] = 3000;
  document["figures"][index_of(report, "fp32_simt_fma")]["energy"]["work_per_launch"] = 1e9;
  const AuditResult result = audit_ceilings(ceilings_from_json(document));
  CHECK_FALSE(result.consistent());
  CHECK(has_finding(result, FindingKind::mismatch, where(report, "dram_bandwidth"),
                    fmt::format("energy.bytes_per_J: report 9000000000, recomputed {:.10g}",
                                *report.find("dram_bandwidth")->energy->derived.work_per_J)));
  CHECK(has_finding(result, FindingKind::mismatch, where(report, "fp16_tensor_cublas"),
                    "energy.joules_per_launch: report 1.38, recomputed 0.69"));
  CHECK(has_finding(result, FindingKind::mismatch, where(report, "fp16_tensor_cublas"),
                    "energy.flop_per_J: report"));
  CHECK(has_finding(result, FindingKind::mismatch, where(report, "fp32_simt_fma"),
                    "energy.pJ_per_flop: report"));

  document = to_json(report);
  nlohmann::json& readings =
      document["figures"][index_of(report, "fp16_tensor_mma")]["energy"]["readings"];
  readings = nlohmann::json::array({readings.front(), readings.back()});  // stalled
  CHECK(has_finding(audit_ceilings(ceilings_from_json(document)), FindingKind::mismatch,
                    where(report, "fp16_tensor_mma"),
                    "energy: figures reported, but energy counter stalled"));
}
