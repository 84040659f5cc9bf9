#pragma once

// The roofline itself: pure arithmetic over a FLOP count, a byte count and
// two ceilings (LLM-Viewer's roofline_analyze, in our units).

#include <optional>
#include <string_view>

namespace cfr {

enum class Regime { memory_bound, compute_bound };

constexpr std::string_view to_string(Regime regime) {
  return regime == Regime::memory_bound ? "memory-bound" : "compute-bound";
}

constexpr std::optional<Regime> parse_regime(std::string_view text) {
  for (Regime regime : {Regime::memory_bound, Regime::compute_bound}) {
    if (text == to_string(regime)) return regime;
  }
  return std::nullopt;
}

// What an interval of AI, [ai_low, ai_high], says against a ridge: the
// regime when the whole interval lies on one side of it, `uncertain` when it
// straddles the ridge (the model cannot tell which roof binds).
enum class IntervalRegime { memory_bound, compute_bound, uncertain };

constexpr std::string_view to_string(IntervalRegime verdict) {
  switch (verdict) {
    case IntervalRegime::memory_bound: return to_string(Regime::memory_bound);
    case IntervalRegime::compute_bound: return to_string(Regime::compute_bound);
    case IntervalRegime::uncertain: break;
  }
  return "uncertain";
}

constexpr std::optional<IntervalRegime> parse_interval_regime(std::string_view text) {
  for (IntervalRegime verdict :
       {IntervalRegime::memory_bound, IntervalRegime::compute_bound, IntervalRegime::uncertain}) {
    if (text == to_string(verdict)) return verdict;
  }
  return std::nullopt;
}

// The same rule as analyze_roofline's regime at each end: memory-bound below
// the ridge. Precondition: 0 < ai_low <= ai_high.
constexpr IntervalRegime judge_interval(double ai_low, double ai_high, double ridge) {
  if (ai_high < ridge) return IntervalRegime::memory_bound;
  if (ai_low >= ridge) return IntervalRegime::compute_bound;
  return IntervalRegime::uncertain;
}

// FLOP per byte at which a compute roof of `peak_TFLOPs` meets a bandwidth
// slope of `bandwidth_GBps` (10^9 bytes/s). The one home of the formula.
constexpr double ridge(double peak_TFLOPs, double bandwidth_GBps) {
  return peak_TFLOPs * 1e12 / (bandwidth_GBps * 1e9);
}

// Where a kernel of a given arithmetic intensity sits against one roof.
struct RooflinePoint {
  double ridge = 0;           // FLOP per byte where peak meets bandwidth
  double ridge_distance = 0;  // ridge / ai: > 1 means left of the ridge
  Regime regime = Regime::memory_bound;
  double roof_TFLOPs = 0;   // min(peak, bandwidth * ai)
  double roof_time_ms = 0;  // max(flops / peak, bytes / bandwidth)
};

// flops and bytes > 0 (ai = flops / bytes); peak in TFLOP/s, bandwidth in GB/s.
RooflinePoint analyze_roofline(double flops, double bytes, double peak_TFLOPs,
                               double bandwidth_GBps);

}  // namespace cfr
