#pragma once

// Turns (kernel, problem, ceiling) into the model half of a report row, and a
// measured time into the achieved figures. The sweep and `audit` both call
// these, so a figure is derived in exactly one place.

#include <optional>
#include <string_view>

#include "roofline/model/gpu_table.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

CeilingRecord datasheet_ceiling(const GpuSpec& gpu, std::string_view table_origin);

// The L2-aware model's GPU figures: the measuring device's (its
// cudaDevAttrL2CacheSize and SM count) or a GPU table row's (`model`). The
// loop the L2 keeps whole is measured, not a device attribute: a sweep takes
// it from the table row its device matches (GpuTable::match_device), if any.
L2ModelInputs l2_model_inputs(const DeviceRecord& device, const GpuSpec* table_row = nullptr);
L2ModelInputs l2_model_inputs(const GpuSpec& gpu);

// What a row records about its kernel: enough to recompute the row's model
// figures without the catalog, so a peer's or a plugin's row (a kernel the
// catalog does not know) is audited like a built-in one.
struct KernelRecord {
  Direction direction = Direction::forward;
  TrafficModelKind traffic = TrafficModelKind::compulsory;
  TileShape tile;  // {0, 0}: untiled
  ComputeUnit compute_unit = ComputeUnit::fp32_simt;
  // The built-in entry whose launches the L2-aware model reads; null for a
  // kernel the catalog does not know (a peer, a plugin).
  const KernelDescription* layout = nullptr;
  // Traffic `plugin`: the kernel's own HBM bytes for the problem (checked).
  std::optional<double> own_bytes{};
  // Traffic `split_kv`: the CTAs that split each group's keys.
  int kv_splits = 1;

  friend bool operator==(const KernelRecord&, const KernelRecord&) = default;
};

// A catalog kernel's record for this problem (its tile for the head dim, its
// compute unit for the dtype, a split-KV kernel's splits for sm_count SMs).
// The tile is the one for gpu_cc, or for the kernel's oldest architecture.
KernelRecord kernel_record(const KernelDescription& kernel, const AttentionProblem& problem,
                           std::optional<ComputeCapability> gpu_cc = std::nullopt,
                           std::optional<int> sm_count = std::nullopt);
// The catalog's description of the build a row of `kernel` ran: its entry at
// `recorded` (ResultRow::kernel_revision), or at the oldest revision it lists
// where the row records none. Null for a kernel the catalog does not know or a
// revision it does not list.
const KernelDescription* catalog_revision(std::string_view kernel, std::optional<int> recorded);

// The record a row carries; the traffic model comes from row.model, which
// must be present. A `plugin` row's own bytes are its traffic.bytes, as
// recorded: only the plugin can count them again.
KernelRecord kernel_record(const ResultRow& row);

// The memory roof a kernel is judged on: dram_read for a kernel whose DRAM
// traffic is a read stream (traffic `split_kv`: fa2_decode reads K/V and
// writes only O and LSE, once per query row) when the ceiling has a read
// bandwidth; dram otherwise, whatever the shape, so a kernel that writes as
// it reads, or whose O is a quarter of its compulsory bytes, keeps the copy's
// slope (docs/model.md §3).
MemoryRoof memory_roof(TrafficModelKind traffic, const CeilingRecord& ceiling);

// FLOPs, bytes of every traffic model that applies, AI and, when the ceiling
// has a peak for the kernel's compute unit, the roofline against the
// kernel's memory roof (memory_roof). With `l2` and a
// kernel layout the L2-aware model applies and is the DRAM model (AI, roof,
// achieved bandwidth); otherwise the kernel's own model is (for `plugin`, its
// own_bytes: a plugin kernel has no layout, so the L2-aware model never
// applies). Pure. Throws std::invalid_argument when the traffic model cannot
// describe the problem (estimate_traffic), or for `plugin` without own_bytes.
ModelFigures model_figures(const KernelRecord& kernel, const AttentionProblem& problem,
                           const CeilingRecord& ceiling, FlopConvention convention,
                           const std::optional<L2ModelInputs>& l2 = std::nullopt);

// Status is `skipped` with a reason when the kernel lacks the dtype or head
// dim, the GPU is older than the kernel's minimum compute capability, or the
// ceiling has no peak for the kernel's compute unit; `failed` with the
// kernel's reason when it counts its own bytes (traffic `plugin`) and gives
// no count, or one that is not finite and positive (checked_byte_count). gpu_cc is the compute
// capability of the GPU the row is for (the device's in a sweep, the GPU
// table's in `model`); without it (a historical row) nothing is checked
// against the minimum and the tile is the one of the kernel's oldest
// architecture.
// `l2`: the GPU figures of the L2-aware model (model_figures).
ResultRow model_row(const KernelDescription& kernel, const AttentionProblem& problem,
                    const CeilingRecord& ceiling, FlopConvention convention,
                    std::optional<ComputeCapability> gpu_cc = std::nullopt,
                    const std::optional<L2ModelInputs>& l2 = std::nullopt);

// Model counts over a median time. All zero for a median <= 0; bandwidth
// utilization is against the ceiling's bandwidth of the model's memory roof
// and needs it, fraction of roof the model's roofline (0 without).
Achieved achieved_figures(const ModelFigures& model, double median_ms,
                          const CeilingRecord& ceiling);

}  // namespace cfr
