#include "ceilings_audit.hpp"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "roofline/core/statistics.hpp"
#include "roofline/report/auditability.hpp"

namespace cfr::evidence {

namespace {

std::string number(double x) {
  return fmt::format("{:.10g}", x);
}

std::string text_of(const std::optional<double>& x) {
  return x ? number(*x) : "absent";
}

void audit_figure(const CeilingFigure& figure, const std::string& where,
                  const AuditTolerance& tolerance, AuditResult& out) {
  if (figure.samples.empty()) {
    out.findings.push_back({FindingKind::unverifiable, where,
                            "samples: none; the value (their median) cannot be recomputed"});
  } else {
    ++out.figures_checked;
    const double median = summarize(figure.samples).median;
    if (!agree(figure.value, median, tolerance)) {
      out.findings.push_back(
          {FindingKind::mismatch, where,
           fmt::format("value: report {}, recomputed {} (the median of {} samples)",
                       number(figure.value), number(median), figure.samples.size())});
    }
  }
  const std::optional<double> reported = figure.reported_fraction_of_datasheet;
  const std::optional<double> recomputed = fraction_of_datasheet(figure);
  if (!reported && !recomputed) return;
  ++out.figures_checked;
  if (reported && recomputed && agree(*reported, *recomputed, tolerance)) return;
  out.findings.push_back({FindingKind::mismatch, where,
                          fmt::format("fraction_of_datasheet: report {}, recomputed {}",
                                      text_of(reported), text_of(recomputed))});
}

}  // namespace

AuditResult audit_ceilings(const CeilingsReport& report, const AuditTolerance& tolerance) {
  AuditResult result;
  result.rows = report.figures.size();
  result.rows_are = "measurements";
  check_auditable_flag(report.provenance, auditability_failures(report), result);
  for (std::size_t i = 0; i < report.figures.size(); ++i) {
    audit_figure(report.figures[i], fmt::format("figures[{}] ({})", i, report.figures[i].figure),
                 tolerance, result);
  }
  return result;
}

}  // namespace cfr::evidence
