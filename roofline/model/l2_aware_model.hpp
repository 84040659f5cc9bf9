#pragma once

// The L2-aware DRAM model of a row (l2_traffic_model.hpp) with its launch
// geometry taken from the kernel's registry entry and its hardware inputs
// (L2 size and partitions, SM count) named and recorded in the row, so
// `audit` re-derives it from the report alone.

#include <optional>
#include <string>

#include "roofline/core/attention_problem.hpp"
#include "roofline/core/compute_capability.hpp"
#include "roofline/model/kernel_description.hpp"
#include "roofline/model/l2_traffic_model.hpp"

namespace cfr {

// Which version of the model's own code a figure comes from, so that a
// report keeps auditing as written when the model is corrected: `audit`
// recomputes a row with the revision it records (absent: 1).
//   1: every tiled launch simulated with the config's tile (the entry's
//      problem_tile taken only for split-KV launches);
//   2: with problem_tile on every launch, the blocks the kernel runs
//      (fa3_wgmma's 176- and 192-key blocks without a mask: docs/model.md,
//      "fa3_wgmma's longer blocks").
inline constexpr int first_l2_model_revision = 1;
inline constexpr int current_l2_model_revision = 2;

// What the model needs of the GPU, and the model revision. `source` says
// where the figures come from: "device 0" (cudaDevAttrL2CacheSize, the SM
// count) in a sweep, "GPU table h200" in `model`.
struct L2ModelInputs {
  double l2_bytes = 0;
  int l2_partitions = 1;
  int sm_count = 0;
  ComputeCapability cc{};  // chooses the kernel's config (tile, resident CTAs)
  std::string source;
  int revision = current_l2_model_revision;
  // The largest loop one L2 partition was measured to keep whole (the GPU
  // table's l2_loop_kept_bytes: tests/gpu/l2_loop_probe), or 0 where none
  // was measured. The interval's high bound simulates a partition no larger
  // (docs/model.md, "The interval"): the point and the low bound do not read it.
  double loop_kept_bytes = 0;
  std::string loop_kept_source = {};

  friend bool operator==(const L2ModelInputs&, const L2ModelInputs&) = default;
};

// l2_partitions_for: roofline/model/kernel_description.hpp (a launcher that
// sizes its head groups by the L2 reads it too).

// The L2-aware estimate of the kernel's DRAM bytes, or empty when the entry
// does not describe its launches well enough: a tiled kernel without resident
// CTAs or launch orders (a plugin may leave them undeclared), a kernel whose
// traffic model the simulation does not cover; or when a launch has more
// than a million CTAs (the simulation dispatches each: bounded work). Throws std::invalid_argument
// for non-positive inputs (l2_traffic_model.hpp).
// Memoized per process by what the simulation reads of the problem: its
// dtype's element bytes and its heads of all batch entries (so fp16 and bf16
// rows, or B = 4, H = 8 and B = 1, H = 32, share one simulation).
std::optional<DramEstimate> l2_aware_dram(const KernelDescription& kernel,
                                          const AttentionProblem& problem,
                                          const L2ModelInputs& inputs);

// The DRAM bytes of the schedules that bound the hardware's (docs/model.md,
// "The interval"): low, CTAs of a head in lock-step (equal causal work
// dispatched together) with one copy of a line in the whole L2; high, the
// resident CTAs drifted apart (starts spread over one CTA's steps) in a
// partition of at most the loop the L2 was measured to keep whole
// (L2ModelInputs::loop_kept_bytes). The point lies inside:
// low <= l2_aware_dram <= high.
struct DramInterval {
  double low = 0;
  double high = 0;

  friend bool operator==(const DramInterval&, const DramInterval&) = default;
};
// Empty where l2_aware_dram is.
std::optional<DramInterval> l2_aware_interval(const KernelDescription& kernel,
                                              const AttentionProblem& problem,
                                              const L2ModelInputs& inputs);

// The same estimate and interval simulated for `problem` as given, with no
// memo and every step of every launch simulated, every CTA listed (no
// repeat skipped, no cycles: l2_cache_sim.hpp): what the shortcuts must
// equal, to the last bit
// (tests/roofline/model/test_l2_aware_memo.cpp, test_l2_repeats.cpp).
std::optional<DramEstimate> l2_aware_dram_simulated(const KernelDescription& kernel,
                                                    const AttentionProblem& problem,
                                                    const L2ModelInputs& inputs);
std::optional<DramInterval> l2_aware_interval_simulated(const KernelDescription& kernel,
                                                        const AttentionProblem& problem,
                                                        const L2ModelInputs& inputs);

}  // namespace cfr
