#pragma once

// The datasheet ceilings of the GPUs the tool knows (configs/gpus.json or a
// user's --gpu-table). Every figure keeps the document it came from.

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/core/compute_capability.hpp"
#include "roofline/core/compute_unit.hpp"
#include "roofline/core/errors.hpp"

namespace cfr {

struct SourcedFigure {
  double value = 0;
  std::string source;
};

// The most SMs a GPU table row or a report's device record may give (the L2
// model keeps state per SM; today's GPUs have under 200).
inline constexpr double max_sm_count = 65536;

struct GpuSpec {
  std::string id;  // what --gpu takes: "a100"
  std::string name;
  std::vector<std::string> match_names;  // substrings of the CUDA device name, for --gpu auto
  std::string compute_capability;        // "8.0"
  std::string compute_capability_source;
  // Nsight Compute's name for the chip (`ncu --query-metrics --chip gh100`),
  // with its source; empty where the table gives none, and `sweep --profile`
  // then asks ncu about the local device.
  std::string ncu_chip;
  std::string ncu_chip_source;
  SourcedFigure sm_count;
  SourcedFigure l2_bytes;
  // The largest loop one L2 partition was measured to keep whole: every
  // resident CTA re-reading the same bytes with no re-read reaching DRAM
  // (tests/gpu/l2_loop_probe). Optional; the L2 model's high bound reads it.
  std::optional<SourcedFigure> l2_loop_kept_bytes;
  SourcedFigure shared_memory_per_sm_bytes;
  SourcedFigure memory_bandwidth_GBps;
  // Indexed by ComputeUnit; empty where the GPU has no such unit (V100 bf16).
  std::array<std::optional<SourcedFigure>, all_compute_units.size()> peak_TFLOPs;

  // compute_capability, which parse_gpu_table has checked is one.
  ComputeCapability cc() const;
  std::optional<double> peak(ComputeUnit unit) const;
  // FLOP per byte at which the unit's roof meets the bandwidth slope.
  std::optional<double> ridge(ComputeUnit unit) const;
};

struct GpuTable {
  std::string origin;  // file the table came from
  std::vector<GpuSpec> gpus;

  const GpuSpec* find(std::string_view id) const;
  std::vector<std::string> ids() const;
  // The row whose compute capability equals `compute_capability` and one of
  // whose match_names occurs in `device_name` (case-insensitive).
  const GpuSpec* match_device(std::string_view device_name,
                              std::string_view compute_capability) const;
};

// Throws InputError for a table that cannot be used: one line naming
// `origin`, the GPU and the field.
GpuTable parse_gpu_table(const nlohmann::json& document, std::string_view origin);

nlohmann::json to_json(const GpuSpec& gpu);

}  // namespace cfr
