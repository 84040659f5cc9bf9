#include "roofline/profile/profile_checks.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

void require_positive(double value, std::string_view what) {
  if (!(value > 0))
    throw std::invalid_argument(fmt::format("{} must be positive, got {}", what, value));
}

}  // namespace

LevelPoint level_point(std::string level, double flops, double bytes, double bandwidth_GBps,
                       double peak_TFLOPs) {
  require_positive(flops, "FLOPs");
  require_positive(bytes, level + " bytes");
  require_positive(bandwidth_GBps, level + " bandwidth");
  require_positive(peak_TFLOPs, "peak");
  return {std::move(level), bytes, flops / bytes,
          analyze_roofline(flops, bytes, peak_TFLOPs, bandwidth_GBps)};
}

Limiter find_limiter(const std::vector<ResourceUse>& resources, double seconds) {
  if (resources.empty()) throw std::invalid_argument("find_limiter: no resources");
  require_positive(seconds, "time");
  Limiter limiter;
  for (const ResourceUse& resource : resources) {
    require_positive(resource.ceiling_per_second, resource.name + " ceiling");
    if (resource.amount < 0) {
      throw std::invalid_argument(
          fmt::format("{} amount {} is negative", resource.name, resource.amount));
    }
    const double fraction = resource.amount / seconds / resource.ceiling_per_second;
    limiter.utilizations.push_back({resource.name, fraction});
    if (limiter.name.empty() || fraction > limiter.fraction) {
      limiter.name = resource.name;
      limiter.fraction = fraction;
    }
  }
  return limiter;
}

double model_error(double model, double measured) {
  require_positive(measured, "measured value");
  return model / measured - 1;
}

double computed_pairs_per_head(std::int64_t seq_len, int mask_rows, int bc, bool causal) {
  if (seq_len <= 0 || mask_rows <= 0 || bc <= 0) {
    throw std::invalid_argument(
        fmt::format("computed pairs: seq_len {}, mask rows {}, Bc {} must be positive", seq_len,
                    mask_rows, bc));
  }
  const std::int64_t all_blocks = (seq_len + bc - 1) / bc;
  double pairs = 0;
  for (std::int64_t first = 0; first < seq_len; first += mask_rows) {
    const std::int64_t last = std::min(seq_len, first + mask_rows) - 1;
    const std::int64_t kv_blocks = causal ? last / bc + 1 : all_blocks;
    pairs += static_cast<double>(last - first + 1) * static_cast<double>(kv_blocks * bc);
  }
  return pairs;
}

FlopCheck flop_check(double counted_flops, const AttentionProblem& problem, int mask_rows, int bc) {
  FlopCheck check;
  check.counted = counted_flops;
  check.model = attention_flops(problem, Direction::forward, FlopConvention::exact).exact;
  require_positive(check.model, "model FLOPs");
  const auto n = static_cast<double>(problem.seq_len);
  const double unmasked = problem.causal ? causal_pairs(n) : n * n;
  if (mask_rows == 0) {
    check.expected_ratio = n * n / unmasked;
    check.masked_work = fmt::format(
        "a library GEMM computes all {:.0f} pairs per head for {:.0f} unmasked ({:.4f}x)", n * n,
        unmasked, check.expected_ratio);
  } else {
    const double computed = computed_pairs_per_head(problem.seq_len, mask_rows, bc, problem.causal);
    check.expected_ratio = computed / unmasked;
    check.masked_work =
        problem.causal
            ? fmt::format(
                  "diagonal blocks: {}-row groups x {}-key blocks compute {:.0f} pairs per "
                  "head for {:.0f} unmasked ({:.4f}x)",
                  mask_rows, bc, computed, unmasked, check.expected_ratio)
            : fmt::format("no mask: {:.0f} pairs per head computed for {:.0f} ({:.4f}x)", computed,
                          unmasked, check.expected_ratio);
  }
  check.ratio = counted_flops / check.model;
  check.residual = check.ratio / check.expected_ratio - 1;
  return check;
}

double timing_ratio(double our_median_ns, double ncu_duration_ns) {
  require_positive(our_median_ns, "our median");
  require_positive(ncu_duration_ns, "ncu duration");
  return our_median_ns / ncu_duration_ns;
}

CycleCheck cycle_check(double our_median_ms, double our_sm_clock_MHz, double ncu_sm_cycles) {
  require_positive(our_median_ms, "our median");
  require_positive(our_sm_clock_MHz, "our SM clock");
  require_positive(ncu_sm_cycles, "ncu's SM cycles");
  const double ours = cycles_in(our_median_ms, our_sm_clock_MHz);
  return {ours, ncu_sm_cycles, ours / ncu_sm_cycles};
}

ProcessCycleCheck process_cycle_check(double our_median_ms, double our_sm_clock_MHz,
                                      double floor_cycles, double ncu_sm_cycles) {
  const CycleCheck plain = cycle_check(our_median_ms, our_sm_clock_MHz, ncu_sm_cycles);
  const double net = plain.our_cycles - floor_cycles;
  if (!(net > 0)) {
    throw std::invalid_argument(
        fmt::format("the timer floor ({} cycles) is not below our cycles ({})", floor_cycles,
                    plain.our_cycles));
  }
  return {plain.our_cycles, floor_cycles, net / ncu_sm_cycles};
}

std::optional<TimingCheck> timing_check(std::optional<double> process_cycle_ratio,
                                        std::optional<double> cycle_ratio,
                                        std::optional<double> seconds_ratio) {
  if (process_cycle_ratio) return TimingCheck{*process_cycle_ratio, "process cycles"};
  if (cycle_ratio) return TimingCheck{*cycle_ratio, "cycles"};
  if (seconds_ratio) return TimingCheck{*seconds_ratio, "seconds"};
  return std::nullopt;
}

}  // namespace cfr
