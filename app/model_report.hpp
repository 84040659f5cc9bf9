#pragma once

#include "roofline/model/gpu_table.hpp"
#include "roofline/report/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

inline constexpr const char* model_projection_reason = "model projection, not a measurement";

// A report whose every row is the model's projection for the plan's points
// on the GPU table's `gpu` (its compute capability, and its L2 and SMs for
// the L2-aware model).
Report model_report(const SweepPlan& plan, const CeilingRecord& ceiling, const GpuSpec& gpu);

}  // namespace cfr::app
