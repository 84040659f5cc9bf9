#pragma once

// Turns (kernel, problem, ceiling) into the model half of a report row, and a
// measured time into the achieved figures. Both the sweep and `audit` use these,
// so a figure is derived in exactly one place.

#include <optional>
#include <string_view>

#include "gpu_table.hpp"
#include "report.hpp"

namespace cfr {

CeilingRecord datasheet_ceiling(const GpuSpec& gpu, std::string_view table_origin);

// Status is `skipped` with a reason when the kernel lacks the dtype or head
// dim, the GPU is older than the kernel's minimum compute capability, or the
// ceiling has no peak for the kernel's compute unit. gpu_cc is the compute
// capability of the GPU the row is for (the device's in a sweep, the GPU
// table's in `model`); without it (a historical row) nothing is checked
// against the minimum and the tile is the one of the kernel's oldest
// architecture.
ResultRow model_row(const KernelDescription& kernel, const AttentionProblem& problem,
                    const CeilingRecord& ceiling, FlopConvention convention,
                    std::optional<ComputeCapability> gpu_cc = std::nullopt);

// Needs row.timing; bandwidth utilization and fraction of roof need the
// ceiling's figures for the row's compute unit (0 when absent).
Achieved achieved_from(const ResultRow& row, const CeilingRecord& ceiling);

// Recomputes a Timing's summary fields from its samples.
void summarize_timing(Timing& timing);

}  // namespace cfr
