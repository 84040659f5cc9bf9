#pragma once

// Figures derived from a profiled row's counters (Nsight Compute) and the
// ceilings: the roofline point per memory level, the limiter, the model's
// error per level, and the FLOP and timing checks. Pure arithmetic; the
// caller picks the counters (ncu_csv.hpp) and the ceilings.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/flop_model.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/roofline_model.hpp"

namespace cfr {

// The roofline of one memory level (DRAM, L2) for the row's FLOPs: AI =
// flops / measured bytes at that level, its roof and regime against the
// level's bandwidth. Throws std::invalid_argument for non-positive inputs.
struct LevelPoint {
  std::string level;  // "dram", "l2"
  double bytes = 0;
  double ai = 0;  // flops / bytes (RooflinePoint keeps only what follows from it)
  RooflinePoint point;
};

LevelPoint level_point(std::string level, double flops, double bytes, double bandwidth_GBps,
                       double peak_TFLOPs);

// A resource the row used: `amount` (bytes, FLOPs, wavefronts) over the row's
// time against what it can do per second.
struct ResourceUse {
  std::string name;  // "dram", "l2", "fp16_tensor", "shared_memory"
  double amount = 0;
  double ceiling_per_second = 0;
};

struct Utilization {
  std::string name;
  double fraction = 0;  // amount / seconds / ceiling
};

// The limiter is the resource closest to its own ceiling as a fraction of it
// (the largest fraction); every fraction is kept. Throws
// std::invalid_argument for no resources, a non-positive time or ceiling.
struct Limiter {
  std::vector<Utilization> utilizations;  // in the order given
  std::string name;                       // the largest fraction's resource
  double fraction = 0;
};

Limiter find_limiter(const std::vector<ResourceUse>& resources, double seconds);

// model / measured - 1: positive when the model over-predicts. Throws for a
// non-positive measured value.
double model_error(double model, double measured);

// Query-key pairs a tiled kernel computes per head: every row group of
// `mask_rows` rows processes the Bc-key blocks up to the one holding its last
// row (causal) or all of them, the masked part of its diagonal block included.
// `mask_rows` is the number of rows that skip a fully masked block together:
// a warp's rows when warps skip on their own (fa1_wmma: 16, fa2: 32), Br when
// the whole CTA does (fa1_scalar).
double computed_pairs_per_head(std::int64_t seq_len, int mask_rows, int bc, bool causal);

// Counted FLOPs against the model's exact count (docs/model.md), with the
// over-count that diagonal tiles cause named and predicted.
struct FlopCheck {
  double counted = 0;         // from counters (tensor-pipe ops, or 2 x FFMA)
  double model = 0;           // matmul FLOPs of the exact convention
  double ratio = 0;           // counted / model
  double expected_ratio = 0;  // computed / unmasked pairs for this tiling; 1 when not causal
  double residual = 0;        // ratio / expected_ratio - 1
  std::string masked_work;    // one line naming the diagonal tiles' extra work
};

// Forward tiled kernels: counted FLOPs against the exact matmul FLOPs,
// expecting the tiling's computed pairs. `mask_rows` and `bc` describe the
// tiling (computed_pairs_per_head); mask_rows = 0 means the kernel computes
// every pair whatever the mask (a library GEMM: expected dense / exact).
FlopCheck flop_check(double counted_flops, const AttentionProblem& problem, int mask_rows, int bc);

// FLOPs per counted unit: Nsight Compute's sm__ops_path_tensor_* counts
// FLOPs (2 per multiply-add; equal to the model on every non-causal tensor
// row of tests/roofline/fixtures/ncu/l2data.csv); an FFMA thread
// instruction is one multiply-add.
inline constexpr double flops_per_tensor_op = 1.0;
inline constexpr double flops_per_ffma = 2.0;

// Our median time over Nsight Compute's gpu__time_duration for the same
// configuration; both in nanoseconds. Throws for non-positive times.
double timing_ratio(double our_median_ns, double ncu_duration_ns);

// The same comparison in SM cycles, so that a clock that differs between the
// timed sweep and the profiled launch does not count as the timer's error:
// our median times the SM clock the probe read over our samples, against
// ncu's sm__cycles_elapsed.avg (cycles each SM saw elapse in the launch).
// SM cycles in `ms` milliseconds at `MHz`: ms x MHz = 1e3 cycles.
constexpr double cycles_in(double ms, double MHz) {
  return ms * MHz * 1e3;
}

struct CycleCheck {
  double our_cycles = 0;  // median_ms x 1e-3 s x sm_clock_MHz x 1e6 /s
  double ncu_cycles = 0;
  double ratio = 0;  // our_cycles / ncu_cycles
};
// Throws std::invalid_argument for a non-positive input.
CycleCheck cycle_check(double our_median_ms, double our_sm_clock_MHz, double ncu_sm_cycles);

// The cycle check inside the profiled process, with the timer measured: our
// median over the same buffers as ncu's launches x the SM clock read over
// those samples, less what the events add to a row of as many kernels (the
// timer floor, TimerFloor in row_profile.hpp), against ncu's cycles.
struct ProcessCycleCheck {
  double our_cycles = 0;    // median_ms x sm_clock_MHz x 1e3
  double floor_cycles = 0;  // subtracted; may be negative
  double ratio = 0;         // (our_cycles - floor_cycles) / ncu_cycles
};
// Throws std::invalid_argument for a non-positive median, clock or ncu
// cycles, and for a floor that leaves no positive time.
ProcessCycleCheck process_cycle_check(double our_median_ms, double our_sm_clock_MHz,
                                      double floor_cycles, double ncu_sm_cycles);

// The timing check the docs hold to ±3 %, by the best basis the row has:
// cycles in the profiled process less the timer floor ("process cycles"),
// else cycles across the sweep's and the profiled process ("cycles"), else
// the seconds ratio (reports profiled before the cycle counters); empty when
// the row has none.
struct TimingCheck {
  double ratio = 0;
  std::string basis;  // "process cycles", "cycles" or "seconds"
};
std::optional<TimingCheck> timing_check(std::optional<double> process_cycle_ratio,
                                        std::optional<double> cycle_ratio,
                                        std::optional<double> seconds_ratio);

}  // namespace cfr
