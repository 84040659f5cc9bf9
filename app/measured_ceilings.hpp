#pragma once

#include <string>
#include <string_view>

#include "kernels/measure/cold_timer.hpp"
#include "roofline/model/gpu_table.hpp"
#include "roofline/report/ceilings_report.hpp"

namespace cfr::app {

// Runs every ceiling micro-benchmark on `device` and records it, with each
// figure's datasheet counterpart from `datasheet` (may be null); with
// `energy`, each figure's energy and its figures (docs/energy.md); with
// `instruction_roofs`, the shared-memory and wgmma figures too.
CeilingsReport measure_ceilings_report(int device, const GpuSpec* datasheet,
                                       const measure::TimingOptions& timing, bool energy = false,
                                       bool instruction_roofs = false);

// mode "measured": measure now on `device`; otherwise mode is the path of a
// `ceilings` JSON file.
CeilingRecord measured_ceiling(const std::string& mode, const GpuSpec& datasheet,
                               std::string_view table_origin, int device);

}  // namespace cfr::app
