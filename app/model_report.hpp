#pragma once

#include "roofline/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

inline constexpr const char* model_projection_reason = "model projection, not a measurement";

// A report whose every row is the model's projection for the plan's points
// on a GPU of compute capability gpu_cc.
Report model_report(const SweepPlan& plan, const CeilingRecord& ceiling, ComputeCapability gpu_cc);

}  // namespace cfr::app
