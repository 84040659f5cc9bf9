#pragma once

// The roof a measured sweep is judged against: a GPU table row's datasheet
// figures, or figures measured by `ceilings`.

#include <string>
#include <vector>

#include "roofline/model/gpu_table.hpp"
#include "roofline/report/report.hpp"

namespace cfr::app {

struct ChosenCeiling {
  CeilingRecord ceiling;
  std::vector<std::string> warnings;  // printed loudly on stderr
  std::vector<std::string> reasons;   // added to provenance.reasons
};

// gpu: a table id or "auto" (the row matching the first device). mode:
// "datasheet", "measured" (measure now on the first device) or the path of a
// `ceilings` JSON. Throws std::runtime_error with one line.
ChosenCeiling choose_ceiling(const GpuTable& table, const std::string& gpu, const std::string& mode,
                             const std::vector<DeviceRecord>& devices);

}  // namespace cfr::app
