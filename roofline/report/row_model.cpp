#include "roofline/report/row_model.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/core/problem_limits.hpp"
#include "roofline/model/kv_splits.hpp"
#include "roofline/model/own_byte_count.hpp"
#include "roofline/report/instruction_roof.hpp"

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

namespace {

void add_loop_kept(L2ModelInputs& inputs, const GpuSpec& gpu) {
  if (!gpu.l2_loop_kept_bytes) return;
  inputs.loop_kept_bytes = gpu.l2_loop_kept_bytes->value;
  inputs.loop_kept_source = fmt::format("GPU table {}: {}", gpu.id, gpu.l2_loop_kept_bytes->source);
}

}  // namespace

L2ModelInputs l2_model_inputs(const DeviceRecord& device, const GpuSpec* table_row) {
  const ComputeCapability cc = parse_compute_capability(device.cc).value_or(ComputeCapability{});
  L2ModelInputs inputs{device.l2_bytes, l2_partitions_for(cc), device.sm_count, cc,
                       fmt::format("device {}", device.index)};
  if (table_row != nullptr) add_loop_kept(inputs, *table_row);
  return inputs;
}

L2ModelInputs l2_model_inputs(const GpuSpec& gpu) {
  L2ModelInputs inputs{gpu.l2_bytes.value, l2_partitions_for(gpu.cc()),
                       static_cast<int>(gpu.sm_count.value), gpu.cc(),
                       fmt::format("GPU table {}", gpu.id)};
  add_loop_kept(inputs, gpu);
  return inputs;
}

KernelRecord kernel_record(const KernelDescription& kernel, const AttentionProblem& problem,
                           std::optional<ComputeCapability> gpu_cc, std::optional<int> sm_count) {
  const KernelConfig config = kernel.config_for(static_cast<int>(problem.head_dim),
                                                gpu_cc.value_or(kernel.min_compute_capability));
  const TileShape config_tile = config.tile;
  KernelRecord record{kernel.direction,
                      kernel.traffic,
                      kernel.problem_tile && config_tile.tiled()
                          ? kernel.problem_tile(problem, config_tile, sm_count.value_or(0))
                          : config_tile,
                      kernel.compute_unit_for(problem.dtype),
                      catalog_revision(kernel.name, kernel.revision),
                      std::nullopt};
  if (kernel.traffic == TrafficModelKind::split_kv && sm_count && record.tile.tiled()) {
    record.kv_splits =
        plan_kv_splits(problem, record.tile, *sm_count, config.page_table_entries).splits;
  }
  return record;
}

const KernelDescription* catalog_revision(std::string_view kernel, std::optional<int> recorded) {
  const KernelDescription* current = find_kernel(kernel);
  if (current == nullptr) return nullptr;
  return current->at_revision(recorded.value_or(current->unrecorded_revision()));
}

KernelRecord kernel_record(const ResultRow& row) {
  const TrafficEstimate& traffic = row.model->traffic;
  return {row.direction,
          traffic.model,
          row.tile,
          row.compute_unit,
          catalog_revision(row.kernel, row.kernel_revision),
          traffic.model == TrafficModelKind::plugin ? std::optional(traffic.bytes) : std::nullopt,
          traffic.kv_splits};
}

MemoryRoof memory_roof(TrafficModelKind traffic, const CeilingRecord& ceiling) {
  const bool read_stream = traffic == TrafficModelKind::split_kv;
  return read_stream && ceiling.read_bandwidth_GBps ? MemoryRoof::dram_read : MemoryRoof::dram;
}

ModelFigures model_figures(const KernelRecord& kernel, const AttentionProblem& problem,
                           const CeilingRecord& ceiling, FlopConvention convention,
                           const std::optional<L2ModelInputs>& l2) {
  ModelFigures model;
  model.flops = attention_flops(problem, kernel.direction, convention);
  if (kernel.traffic == TrafficModelKind::plugin) {
    if (!kernel.own_bytes) {
      throw std::invalid_argument("traffic model 'plugin' needs the kernel's own byte count");
    }
    model.traffic = own_count_traffic(problem, kernel.direction, *kernel.own_bytes);
  } else {
    model.traffic =
        estimate_traffic(problem, kernel.direction, kernel.traffic, kernel.tile, kernel.kv_splits);
  }
  for (TrafficModelKind other : traffic_models_for(kernel.traffic)) {
    const double bytes =
        other == kernel.traffic
            ? model.traffic.bytes
            : estimate_traffic(problem, kernel.direction, other, kernel.tile).bytes;
    model.bytes_by_model.push_back({other, bytes});
  }
  model.dram_model = kernel.traffic;
  if (l2 && kernel.layout != nullptr) {
    if (const auto dram = l2_aware_dram(*kernel.layout, problem, *l2)) {
      model.bytes_by_model.push_back({TrafficModelKind::l2_aware, dram->bytes()});
      model.dram_model = TrafficModelKind::l2_aware;
      model.l2_inputs = l2;
      model.dram_interval = l2_aware_interval(*kernel.layout, problem, *l2);
    }
  }
  const double dram_bytes = model.dram_bytes();
  model.ai = model.flops.counted() / dram_bytes;
  if (model.dram_interval) {
    model.ai_low = model.flops.counted() / model.dram_interval->high;
    model.ai_high = model.flops.counted() / model.dram_interval->low;
  }
  model.memory_roof = memory_roof(kernel.traffic, ceiling);
  if (const auto peak = ceiling.peak(kernel.compute_unit)) {
    model.roofline = analyze_roofline(model.flops.counted(), dram_bytes, *peak,
                                      ceiling.bandwidth(model.memory_roof_used()));
    if (model.ai_low && model.ai_high) {
      model.interval_regime = judge_interval(*model.ai_low, *model.ai_high, model.roofline->ridge);
    }
    if (kernel.layout != nullptr) {
      model.instruction_roof =
          instruction_roof(kernel.layout->instruction, problem.dtype, ceiling, model.ai,
                           ceiling.bandwidth(model.memory_roof_used()));
    }
  }
  return model;
}

ResultRow model_row(const KernelDescription& kernel, const AttentionProblem& problem,
                    const CeilingRecord& ceiling, FlopConvention convention,
                    std::optional<ComputeCapability> gpu_cc,
                    const std::optional<L2ModelInputs>& l2) {
  ResultRow row;
  row.kernel = std::string(kernel.name);
  row.direction = kernel.direction;
  row.problem = problem;
  if (const KernelDescription* current = find_kernel(kernel.name);
      current != nullptr && !current->earlier_revisions.empty()) {
    row.kernel_revision = kernel.revision;
  }
  row.compute_unit = kernel.compute_unit_for(problem.dtype);
  if (const auto why = problem_out_of_range(problem)) {
    row.status = RowStatus::skipped;
    row.reason = *why;
    return row;
  }
  KernelRecord record =
      kernel_record(kernel, problem, gpu_cc, l2 ? std::optional(l2->sm_count) : std::nullopt);
  row.tile = record.tile;

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
  if (auto reason = shape_reason(kernel, problem)) {
    row.status = RowStatus::skipped;
    row.reason = std::move(*reason);
    return row;
  }
  if (gpu_cc) {
    if (auto reason = below_minimum_reason(kernel, *gpu_cc)) {
      row.status = RowStatus::skipped;
      row.reason = std::move(*reason);
      return row;
    }
  }
  if (auto reason = grid_limit_reason(kernel, problem, record.tile)) {
    row.status = RowStatus::skipped;
    row.reason = std::move(*reason);
    return row;
  }
  if (kernel.own_bytes != nullptr) {
    const ByteCount count = checked_byte_count(*kernel.own_bytes, kernel.name, problem);
    if (const std::string* why = std::get_if<std::string>(&count)) {
      row.status = RowStatus::failed;
      row.reason = *why;
      return row;
    }
    record.own_bytes = std::get<double>(count);
  }
  row.model = model_figures(record, problem, ceiling, convention, l2);
  if (!row.model->roofline) {
    row.status = RowStatus::skipped;
    row.reason = fmt::format("ceiling {} has no {} peak", ceiling.gpu, to_string(row.compute_unit));
  }
  return row;
}

Achieved achieved_figures(const ModelFigures& model, double median_ms,
                          const CeilingRecord& ceiling) {
  Achieved achieved;
  if (median_ms <= 0) return achieved;
  const double seconds = median_ms * 1e-3;
  achieved.TFLOPs = model.flops.counted() / seconds / 1e12;
  achieved.bandwidth_GBps = model.dram_bytes() / seconds / 1e9;
  if (const double bandwidth = ceiling.bandwidth(model.memory_roof_used()); bandwidth > 0) {
    achieved.bandwidth_utilization = achieved.bandwidth_GBps / bandwidth;
  }
  if (model.roofline && model.roofline->roof_TFLOPs > 0) {
    achieved.fraction_of_roof = achieved.TFLOPs / model.roofline->roof_TFLOPs;
  }
  if (model.instruction_roof && model.instruction_roof->TFLOPs > 0) {
    achieved.fraction_of_instruction_roof = achieved.TFLOPs / model.instruction_roof->TFLOPs;
  }
  return achieved;
}

}  // namespace cfr
