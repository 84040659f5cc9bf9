#include "roofline/model/l2_aware_model.hpp"

#include "roofline/model/kv_splits.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "roofline/core/shared_memo.hpp"

namespace cfr {

namespace {

// naive's softmax kernel (kernels/naive_attention.cu): 256 threads per CTA,
// so 2048 threads per SM (sm_80 and newer) hold 8 of them.
constexpr int softmax_ctas_per_sm = 8;
// cuBLAS chooses its own GEMM tiles; its sm_90 kernels in the H200 recording
// (tests/roofline/fixtures/ncu/l2data.csv) run one CTA per SM over 64 to 256
// rows of S. Only where S stops fitting the L2 depends on the rows.
constexpr int gemm_ctas_per_sm = 1;
constexpr int gemm_block_rows = 128;

// The schedules the model simulates (docs/model.md, "The interval"): the
// point's, and the two that bound the hardware's.
enum class Schedule { point, lock_step, drifted };

// Whether the repeats of a launch's state are skipped (l2_cache_sim.hpp):
// always, but for the full simulation that the skip must equal.
enum class Repeats { skipped, simulated };

// The bounds' step budget: 2^21 CTA-steps, a sixteenth of the point's, so the
// interval adds at most an eighth to the point's cost on a long launch.
constexpr std::int64_t bound_max_steps = std::int64_t{1} << 21;

std::optional<LaunchGeometry> geometry_of(const GridLaunch& launch, const KernelConfig& config,
                                          const AttentionProblem& problem,
                                          const L2ModelInputs& inputs, Schedule schedule) {
  if (!config.tile.tiled() || config.ctas_per_sm <= 0) return std::nullopt;
  // Lock-step: a head's CTAs of equal causal work start together.
  const CausalBlockOrder order =
      schedule == Schedule::lock_step ? CausalBlockOrder::heaviest_first : launch.causal_order;
  LaunchGeometry geometry{config.tile, config.ctas_per_sm, inputs.sm_count,
                          grid_order_for(launch, problem.causal), order};
  const std::int64_t blocks_per_head =
      blocks_along(block_axis_of(geometry.grid_order), 1, 1, problem.seq_len, config.tile);
  geometry.kv_heads_per_group =
      kv_heads_per_group(launch, problem, inputs.l2_bytes, inputs.l2_partitions, blocks_per_head,
                         geometry.concurrency());
  return geometry;
}

// The L2 bytes a schedule simulates: the drifted (high) one's partitions hold
// no more than the loop the hardware was measured to keep whole, since an
// LRU of that size misses every re-read the hardware's L2 starts to miss
// (docs/model.md, "The interval"); the others see the whole L2.
double simulated_l2_bytes(const L2ModelInputs& inputs, Schedule schedule) {
  if (schedule != Schedule::drifted || inputs.loop_kept_bytes <= 0) return inputs.l2_bytes;
  return std::min(inputs.l2_bytes, inputs.loop_kept_bytes * inputs.l2_partitions);
}

// Lock-step also holds one copy of a line in the whole L2 (no partition
// keeps its own); drifted spreads the resident CTAs' starts.
L2Config l2_config(const L2ModelInputs& inputs, Schedule schedule, Repeats repeats) {
  L2Config l2{simulated_l2_bytes(inputs, schedule), inputs.l2_partitions};
  l2.skip_repeats = repeats == Repeats::skipped;
  if (schedule == Schedule::point) return l2;
  l2.max_steps = bound_max_steps;
  if (schedule == Schedule::lock_step) l2.partitions = 1;
  if (schedule == Schedule::drifted) l2.drifted = true;
  return l2;
}

// The simulation dispatches every CTA of a launch: past this many (a million, far
// beyond any shape a sweep times: H 32, N 131072 at Br 64 is 65536) the model
// does not apply and the row keeps its own DRAM model, in bounded time.
constexpr double max_simulated_ctas = 1 << 20;

bool too_large(const AttentionProblem& problem, int block_rows) {
  const double blocks = std::ceil(static_cast<double>(problem.seq_len) / block_rows);
  return static_cast<double>(problem.batch) * static_cast<double>(problem.heads) * blocks >
         max_simulated_ctas;
}

// The config the launches run with: the entry's for the head dim and GPU,
// its tile as the entry's problem_tile gives it this problem (model revision
// 2 on; revision 1 for split-KV launches only).
KernelConfig simulated_config(const KernelDescription& kernel, const AttentionProblem& problem,
                              const L2ModelInputs& inputs) {
  KernelConfig config = kernel.config_for(static_cast<int>(problem.head_dim), inputs.cc);
  const bool launched_tile = inputs.revision >= 2 || kernel.traffic == TrafficModelKind::split_kv;
  if (launched_tile && kernel.problem_tile && config.tile.tiled()) {
    config.tile = kernel.problem_tile(problem, config.tile, inputs.sm_count);
  }
  return config;
}

std::optional<DramEstimate> simulate(const KernelDescription& kernel,
                                     const AttentionProblem& problem, const L2ModelInputs& inputs,
                                     Schedule schedule, Repeats repeats = Repeats::skipped) {
  const L2Config l2 = l2_config(inputs, schedule, repeats);
  if (problem.paged() && kernel.traffic != TrafficModelKind::split_kv) return std::nullopt;
  const bool gqa_backward = kernel.traffic == TrafficModelKind::fa2_backward &&
                            problem.keys() == problem.seq_len && !problem.paged();
  if (!problem.square() && kernel.traffic != TrafficModelKind::kv_reload &&
      kernel.traffic != TrafficModelKind::split_kv && !gqa_backward) {
    return std::nullopt;  // the materialized and fa1_bwd simulations are square's
  }
  if (kernel.traffic == TrafficModelKind::materialized) {
    if (too_large(problem, 1)) return std::nullopt;  // the softmax runs one CTA per row
    return materialized_dram(
        problem, {inputs.sm_count, softmax_ctas_per_sm, gemm_ctas_per_sm, gemm_block_rows}, l2);
  }
  if (kernel.configs.empty()) return std::nullopt;
  const KernelConfig config = simulated_config(kernel, problem, inputs);
  if (!config.tile.tiled() || too_large(problem, std::min(config.tile.br, config.tile.bc))) {
    return std::nullopt;
  }
  if (kernel.traffic == TrafficModelKind::split_kv && kernel.launches.size() == 1) {
    const auto forward = geometry_of(kernel.launches[0], config, problem, inputs, schedule);
    if (!forward) return std::nullopt;
    return split_kv_dram(
        problem, *forward,
        plan_kv_splits(problem, config.tile, inputs.sm_count, config.page_table_entries).splits,
        l2);
  }
  if (kernel.traffic == TrafficModelKind::kv_reload && kernel.launches.size() == 1) {
    const auto forward = geometry_of(kernel.launches[0], config, problem, inputs, schedule);
    if (!forward) return std::nullopt;
    return flash_forward_dram(problem, *forward, l2);
  }
  if (kernel.traffic == TrafficModelKind::fa1_backward && kernel.launches.size() == 2) {
    const auto dk_dv = geometry_of(kernel.launches[0], config, problem, inputs, schedule);
    const auto dq = geometry_of(kernel.launches[1], config, problem, inputs, schedule);
    if (!dk_dv || !dq) return std::nullopt;
    return flash_backward_dram(problem, *dk_dv, *dq, l2);
  }
  if (kernel.traffic == TrafficModelKind::fa2_backward && kernel.launches.size() == 3) {
    const auto prepass = geometry_of(kernel.launches[0], config, problem, inputs, schedule);
    const auto main = geometry_of(kernel.launches[1], config, problem, inputs, schedule);
    const auto convert = geometry_of(kernel.launches[2], config, problem, inputs, schedule);
    if (!prepass || !main || !convert) return std::nullopt;
    return fa2_backward_dram(problem, *prepass, *main, *convert, l2);
  }
  return std::nullopt;
}

// The problem as the simulation sees it: the launches read only the element
// bytes of the dtype (fp16 and bf16 are one problem), and batch and heads
// only as their product (B = 4, H = 8 is B = 1, H = 32), since every head of
// every batch entry is one group of tiles dispatched in the same order.
AttentionProblem simulated_problem(const AttentionProblem& problem) {
  AttentionProblem canonical = problem;
  if (element_bytes(problem.dtype) == element_bytes(DType::fp16)) canonical.dtype = DType::fp16;
  canonical.batch = 1;
  canonical.heads = problem.heads_total();
  canonical.kv_heads = problem.kv_heads_total();
  return canonical;
}

// What one estimate is a function of: the traffic model, the config and the
// launch orders the entry gives this problem, the simulated problem and the
// GPU's figures (the L2 the schedule simulates among them). The config's page table size plans a
// paged cache's splits (fa2_decode's revisions 1 and 2 differ in it alone).
using SimulationKey = std::tuple<int, int, int, int, int, std::string, AttentionProblem, double,
                                 double, int, int, Schedule>;

SimulationKey key_of(const KernelDescription& kernel, const AttentionProblem& problem,
                     const L2ModelInputs& inputs, Schedule schedule) {
  const KernelConfig config = simulated_config(kernel, problem, inputs);
  std::string launches;
  for (const GridLaunch& launch : kernel.launches) {
    for (GridAxis axis : grid_order_for(launch, problem.causal)) {
      launches += std::string(to_string(axis)) + ",";
    }
    launches += launch.causal_order == CausalBlockOrder::heaviest_first ? "h" : "n";
    launches += launch.head_groups == HeadGroups::fit_l2       ? "g;"
                : launch.head_groups == HeadGroups::fill_slots ? "s;"
                                                               : ";";
  }
  return {static_cast<int>(kernel.traffic),
          config.tile.br,
          config.tile.bc,
          config.ctas_per_sm,
          config.page_table_entries,
          launches,
          simulated_problem(problem),
          inputs.l2_bytes,  // the launcher's head groups read it
          simulated_l2_bytes(inputs, schedule),
          inputs.l2_partitions,
          inputs.sm_count,
          schedule};
}

}  // namespace

std::optional<DramEstimate> l2_aware_dram_simulated(const KernelDescription& kernel,
                                                    const AttentionProblem& problem,
                                                    const L2ModelInputs& inputs) {
  return simulate(kernel, problem, inputs, Schedule::point, Repeats::simulated);
}

namespace {

// The simulation is pure and costs up to a few tenths of a second a row, and
// a report may hold one configuration many times (audit of 2000 copies of a
// naive B 128 row took 458 s), or many rows that are one simulation (a
// sweep's fp16 and bf16 rows, its B x H of equal product): each simulated
// problem is simulated once per process and schedule. Rows computed on
// several threads (model_rows) share it: a thread that wants a simulation
// another is running waits for that one's answer instead of running it too.
// Bounded: the memo starts over past 4096 entries.
std::optional<DramEstimate> memoized(const KernelDescription& kernel,
                                     const AttentionProblem& problem, const L2ModelInputs& inputs,
                                     Schedule schedule) {
  static SharedMemo<SimulationKey, std::optional<DramEstimate>> memo(4096);
  const SimulationKey key = key_of(kernel, problem, inputs, schedule);
  return memo.get(key, [&] { return simulate(kernel, std::get<6>(key), inputs, schedule); });
}

}  // namespace

std::optional<DramEstimate> l2_aware_dram(const KernelDescription& kernel,
                                          const AttentionProblem& problem,
                                          const L2ModelInputs& inputs) {
  return memoized(kernel, problem, inputs, Schedule::point);
}

namespace {

// The interval from `estimate(schedule)`: memoized, or fully simulated.
template <typename Estimate>
std::optional<DramInterval> interval_of(const L2ModelInputs& inputs, Estimate estimate) {
  const auto point = estimate(Schedule::point);
  if (!point) return std::nullopt;
  // A launch whose every line fits the L2 the high bound sees (the point's,
  // or the loop kept whole where smaller) is read once and evicts nothing
  // under any schedule: only when its writes reach DRAM is
  // open. The L2 writes dirty lines back on its own schedule, so the high
  // bound counts every write of the launch (eventual bytes), the low one
  // those the schedule evicts.
  const double eventual = point->eventual_bytes();
  const L2Config high_l2{simulated_l2_bytes(inputs, Schedule::drifted), inputs.l2_partitions};
  if (eventual <= high_l2.effective_bytes()) {
    return DramInterval{point->bytes(), eventual};
  }
  const auto low = estimate(Schedule::lock_step);
  const auto high = estimate(Schedule::drifted);
  if (!low || !high) return std::nullopt;
  return DramInterval{std::min(point->bytes(), low->bytes()),
                      std::max(eventual, high->eventual_bytes())};
}

}  // namespace

std::optional<DramInterval> l2_aware_interval(const KernelDescription& kernel,
                                              const AttentionProblem& problem,
                                              const L2ModelInputs& inputs) {
  return interval_of(
      inputs, [&](Schedule schedule) { return memoized(kernel, problem, inputs, schedule); });
}

std::optional<DramInterval> l2_aware_interval_simulated(const KernelDescription& kernel,
                                                        const AttentionProblem& problem,
                                                        const L2ModelInputs& inputs) {
  return interval_of(inputs, [&](Schedule schedule) {
    return simulate(kernel, problem, inputs, schedule, Repeats::simulated);
  });
}

}  // namespace cfr
