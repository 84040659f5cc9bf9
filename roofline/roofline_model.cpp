#include "roofline_model.hpp"

#include <algorithm>

namespace cfr {

RooflinePoint analyze_roofline(double flops, double bytes, double peak_TFLOPs,
                               double bandwidth_GBps) {
  const double peak = peak_TFLOPs * 1e12;         // FLOP/s
  const double bandwidth = bandwidth_GBps * 1e9;  // byte/s
  RooflinePoint point;
  point.ai = flops / bytes;
  point.ridge = ridge(peak_TFLOPs, bandwidth_GBps);
  point.ridge_distance = point.ridge / point.ai;
  point.regime = point.ai < point.ridge ? Regime::memory_bound : Regime::compute_bound;
  point.roof_TFLOPs = std::min(peak, bandwidth * point.ai) / 1e12;
  point.compute_time_ms = flops / peak * 1e3;
  point.memory_time_ms = bytes / bandwidth * 1e3;
  point.roof_time_ms = std::max(point.compute_time_ms, point.memory_time_ms);
  return point;
}

}  // namespace cfr
