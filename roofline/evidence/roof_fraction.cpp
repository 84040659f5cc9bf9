#include "roof_fraction.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit.hpp"
#include "compare.hpp"

namespace cfr::evidence {

std::vector<RoofFraction> roof_fractions(const Report& report) {
  std::vector<RoofFraction> out;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (row.status != RowStatus::ok || !row.achieved || !row.roof_TFLOPs || !row.regime) continue;
    out.push_back({row_location(i, row), device_model(report, row), row.ai, row.achieved->TFLOPs,
                   *row.roof_TFLOPs, row.achieved->fraction_of_roof, *row.regime});
  }
  std::stable_sort(out.begin(), out.end(), [](const RoofFraction& a, const RoofFraction& b) {
    return a.fraction < b.fraction;
  });
  return out;
}

std::string render_roof_fractions(const std::vector<RoofFraction>& rows, const Report& report,
                                  std::string_view file) {
  std::string out = fmt::format("== {}: fraction of the roof ({} {} ceiling), worst first\n", file,
                                report.ceiling.gpu, report.ceiling.source);
  if (!report.provenance.auditable) {
    out += fmt::format("!! NOT AUDITABLE (source {}): not evidence\n",
                       to_string(report.provenance.source));
  }
  out += fmt::format("{:>8}  {:>10} {:>10} {:>8}  {:<13}  {:<24} {}\n", "fraction", "TFLOP/s",
                     "roof", "AI", "regime", "device", "row");
  for (const RoofFraction& r : rows) {
    out += fmt::format("{:>7.1f}%  {:>10.3f} {:>10.3f} {:>8.2f}  {:<13}  {:<24} {}\n",
                       r.fraction * 100, r.achieved_TFLOPs, r.roof_TFLOPs, r.ai,
                       to_string(r.regime), r.device_model, r.location);
  }
  if (rows.empty())
    out += "no measured rows with a roof (a model report has no achieved figures)\n";
  return out;
}

nlohmann::json to_json(const std::vector<RoofFraction>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const RoofFraction& r : rows) {
    out.push_back({{"row", r.location},
                   {"device_model", r.device_model},
                   {"ai", r.ai},
                   {"achieved_TFLOPs", r.achieved_TFLOPs},
                   {"roof_TFLOPs", r.roof_TFLOPs},
                   {"fraction_of_roof", r.fraction},
                   {"regime", to_string(r.regime)}});
  }
  return out;
}

}  // namespace cfr::evidence
