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
