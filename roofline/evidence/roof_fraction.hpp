#pragma once

// `compare --roofline`: a report against its own roof. Each measured row's
// achieved TFLOP/s as a fraction of the roofline bound at its arithmetic
// intensity, worst first, so the kernels with the most headroom lead.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/report/report.hpp"

namespace cfr::evidence {

struct RoofFraction {
  const ResultRow* row = nullptr;
  std::string location;  // row_location()
  std::string device_model;
  double ai = 0;
  double achieved_TFLOPs = 0;
  double roof_TFLOPs = 0;
  double fraction = 0;  // the report's achieved.fraction_of_roof
  Regime regime = Regime::memory_bound;
};

// Ok rows that have achieved figures and a roof, sorted by fraction
// ascending (ties keep report order). The rows point into `report`.
std::vector<RoofFraction> roof_fractions(const Report& report);

// One line per row: the figures of roof_fraction_figures(), then the device
// and the row.
std::string render_roof_fractions(const std::vector<RoofFraction>& rows, const Report& report,
                                  std::string_view file);

nlohmann::json to_json(const std::vector<RoofFraction>& rows);

}  // namespace cfr::evidence
