#include "row_model.hpp"

#include <fmt/format.h>

#include "statistics.hpp"

namespace cfr {

CeilingRecord datasheet_ceiling(const GpuSpec& gpu, std::string_view table_origin) {
  CeilingRecord ceiling;
  ceiling.gpu = gpu.id;
  ceiling.gpu_name = gpu.name;
  ceiling.source = "datasheet";
  ceiling.source_detail =
      fmt::format("{} (bandwidth: {})", table_origin, gpu.memory_bandwidth_GBps.source);
  ceiling.bandwidth_GBps = gpu.memory_bandwidth_GBps.value;
  for (ComputeUnit unit : all_compute_units) {
    ceiling.peak_TFLOPs[static_cast<std::size_t>(unit)] = gpu.peak(unit);
  }
  return ceiling;
}

ResultRow model_row(const KernelDescription& kernel, const AttentionProblem& problem,
                    const CeilingRecord& ceiling, FlopConvention convention,
                    std::optional<ComputeCapability> gpu_cc) {
  ResultRow row;
  row.kernel = std::string(kernel.name);
  row.direction = kernel.direction;
  row.dtype = problem.dtype;
  row.batch = problem.batch;
  row.heads = problem.heads;
  row.seq_len = problem.seq_len;
  row.head_dim = problem.head_dim;
  row.causal = problem.causal;
  row.tile = kernel.tile_for(static_cast<int>(problem.head_dim),
                             gpu_cc.value_or(kernel.min_compute_capability));
  row.compute_unit = kernel.compute_unit_for(problem.dtype);

  if (!kernel.dtypes.contains(problem.dtype)) {
    row.status = RowStatus::skipped;
    row.reason = fmt::format("{} has no {} variant", kernel.name, to_string(problem.dtype));
    return row;
  }
  if (!kernel.supports_head_dim(static_cast<int>(problem.head_dim))) {
    row.status = RowStatus::skipped;
    row.reason = fmt::format("{} has no head_dim {} variant", kernel.name, problem.head_dim);
    return row;
  }
  if (gpu_cc) {
    if (auto reason = below_minimum_reason(kernel, *gpu_cc)) {
      row.status = RowStatus::skipped;
      row.reason = std::move(*reason);
      return row;
    }
  }

  row.flops = attention_flops(problem, kernel.direction, convention);
  row.traffic = estimate_traffic(problem, kernel.direction, kernel.traffic, row.tile);
  row.ai = row.flops.counted() / row.traffic.bytes;

  const auto peak = ceiling.peak(row.compute_unit);
  if (!peak) {
    row.status = RowStatus::skipped;
    row.reason = fmt::format("ceiling {} has no {} peak", ceiling.gpu, to_string(row.compute_unit));
    return row;
  }
  const RooflinePoint point =
      analyze_roofline(row.flops.counted(), row.traffic.bytes, *peak, ceiling.bandwidth_GBps);
  row.ridge = point.ridge;
  row.ridge_distance = point.ridge_distance;
  row.regime = point.regime;
  row.roof_TFLOPs = point.roof_TFLOPs;
  row.roof_time_ms = point.roof_time_ms;
  return row;
}

Achieved achieved_from(const ResultRow& row, const CeilingRecord& ceiling) {
  Achieved achieved;
  if (!row.timing || row.timing->median_ms <= 0) return achieved;
  const double seconds = row.timing->median_ms * 1e-3;
  achieved.TFLOPs = row.flops.counted() / seconds / 1e12;
  achieved.bandwidth_GBps = row.traffic.bytes / seconds / 1e9;
  if (ceiling.bandwidth_GBps > 0) {
    achieved.bandwidth_utilization = achieved.bandwidth_GBps / ceiling.bandwidth_GBps;
  }
  if (row.roof_TFLOPs && *row.roof_TFLOPs > 0) {
    achieved.fraction_of_roof = achieved.TFLOPs / *row.roof_TFLOPs;
  }
  return achieved;
}

void summarize_timing(Timing& timing) {
  const SampleSummary summary = summarize(timing.samples_ms);
  timing.median_ms = summary.median;
  timing.min_ms = summary.min;
  timing.max_ms = summary.max;
  timing.mean_ms = summary.mean;
  timing.stdev_ms = summary.stdev;
  timing.q1_ms = summary.q1;
  timing.q3_ms = summary.q3;
}

}  // namespace cfr
