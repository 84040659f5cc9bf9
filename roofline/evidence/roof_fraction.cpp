#include "roof_fraction.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit.hpp"
#include "compare.hpp"
#include "roofline/report/figures.hpp"

namespace cfr::evidence {

namespace {

// The columns of the listing, in order.
constexpr std::array<std::string_view, 5> columns{"achieved/fraction_of_roof", "achieved/TFLOPs",
                                                  "model/roof_TFLOPs", "model/ai", "model/regime"};

// Wide enough for the label and for a regime word.
std::size_t width(const Figure& f) {
  return f.word() ? 13 : std::max<std::size_t>(f.label.size(), 7);
}

}  // namespace

std::vector<RoofFraction> roof_fractions(const Report& report) {
  std::vector<RoofFraction> out;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (row.status != RowStatus::ok || !row.achieved || !has_group(row, FigureGroup::roofline)) {
      continue;
    }
    const RooflinePoint& roof = *row.model->roofline;
    out.push_back({&row, row_location(i, row), device_model(report, row), row.model->ai,
                   row.achieved->TFLOPs, roof.roof_TFLOPs, row.achieved->fraction_of_roof,
                   roof.regime});
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
  for (std::string_view tag : columns) {
    out += fmt::format("{:>{}}  ", figure(tag).label, width(figure(tag)));
  }
  out += fmt::format("{:<24} {}\n", "device", "row");
  for (const RoofFraction& r : rows) {
    for (std::string_view tag : columns) {
      const Figure& f = figure(tag);
      out += fmt::format("{:>{}}  ", format_figure(f, figure_value(f, *r.row)), width(f));
    }
    out += fmt::format("{:<24} {}\n", r.device_model, r.location);
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
