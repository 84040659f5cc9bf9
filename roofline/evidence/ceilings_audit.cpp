#include "ceilings_audit.hpp"

#include <optional>
#include <string>
#include <variant>

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

// Each derived energy figure against ceiling_energy_figures over the kept
// readings; figures beside readings that give none are a mismatch.
void audit_energy(const CeilingFigure& figure, const std::string& where,
                  const AuditTolerance& tolerance, AuditResult& out) {
  if (!figure.energy || !figure.energy->collected()) return;
  const CeilingEnergy& energy = *figure.energy;
  const OrReason<CeilingEnergyDerived> again = ceiling_energy_figures(energy);
  if (const auto* why = std::get_if<std::string>(&again)) {
    out.findings.push_back(
        {FindingKind::mismatch, where, fmt::format("energy: figures reported, but {}", *why)});
    return;
  }
  const CeilingEnergyDerived& recomputed = std::get<CeilingEnergyDerived>(again);
  const EnergyWork work = energy_work(figure.unit);
  for (const CeilingEnergyField& field : ceiling_energy_fields()) {
    const std::optional<double>& reported = energy.derived.*field.member;
    const std::optional<double>& expected = recomputed.*field.member;
    if (!reported && !expected) continue;
    ++out.figures_checked;
    if (reported && expected && agree(*reported, *expected, tolerance)) continue;
    out.findings.push_back({FindingKind::mismatch, where,
                            fmt::format("energy.{}: report {}, recomputed {}", field.key(work),
                                        text_of(reported), text_of(expected))});
  }
}

}  // namespace

AuditResult audit_ceilings(const CeilingsReport& report, const AuditTolerance& tolerance) {
  AuditResult result;
  result.rows = report.figures.size();
  result.rows_are = "measurements";
  check_auditable_flag(report.provenance, auditability_failures(report), result);
  for (std::size_t i = 0; i < report.figures.size(); ++i) {
    const std::string where = fmt::format("figures[{}] ({})", i, report.figures[i].figure);
    audit_figure(report.figures[i], where, tolerance, result);
    audit_energy(report.figures[i], where, tolerance, result);
  }
  return result;
}

}  // namespace cfr::evidence
