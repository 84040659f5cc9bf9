#pragma once

// A profiled row's derived figures from its counters, its model and the
// ceiling (profile_checks.hpp does the arithmetic). `sweep --profile` calls
// profile_figures once the counters are in; `audit` calls it again on the
// report's counters, so an edited counter or figure shows.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/compute_capability.hpp"
#include "roofline/profile/ncu_csv.hpp"
#include "roofline/profile/ncu_query.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

// Every metric `sweep --profile` asks Nsight Compute for; one list for
// every row, so one ncu process profiles them all.
std::vector<std::string> profile_metrics();

// Every metric of profile_metrics() for one row, from its combined launches:
// its value, or unavailable with the reason (not on the chip, absent from or
// not a number in the CSV).
std::vector<ProfileCounter> profile_counters(const ncu::RowCounters& row,
                                             const ncu::MetricNames& chip);

// The counter of a compute unit's work and its FLOPs per count:
// sm__ops_path_tensor_src_* count FLOPs (2 per multiply-add; equal to the
// model on every non-causal tensor row recorded on the H200), an FFMA thread
// instruction is one multiply-add.
struct FlopCounter {
  std::string_view metric;
  double flops_per_count = 1;
};
std::optional<FlopCounter> flop_counter(ComputeUnit unit);

// Rows of a Q block that skip a fully masked K/V block together (the
// masked_rows of computed_pairs_per_head): a warp's rows where each warp owns
// its rows for the whole pass (the tensor-core kernels), the CTA's Br where
// the CTA steps through the blocks together (the SIMT kernels), 0 for a
// library GEMM, which computes every pair. Empty for a kernel the catalog
// does not know.
std::optional<int> mask_rows(std::string_view kernel, const TileShape& tile, int head_dim,
                             ComputeCapability cc);

// Needs row.profile with counters, and row.model. `cc`: the row's device's
// (chooses the kernel config); empty: the kernel's oldest. A figure whose
// inputs are unavailable stays empty.
ProfileDerived profile_figures(const ResultRow& row, const CeilingRecord& ceiling,
                               std::optional<ComputeCapability> cc);

}  // namespace cfr
