#include "roofline/model/roofline_model.hpp"

#include <algorithm>

namespace cfr {

RooflinePoint analyze_roofline(double flops, double bytes, double peak_TFLOPs,
                               double bandwidth_GBps) {
  const double peak = peak_TFLOPs * 1e12;         // FLOP/s
  const double bandwidth = bandwidth_GBps * 1e9;  // byte/s
  const double ai = flops / bytes;
  RooflinePoint point;
  point.ridge = ridge(peak_TFLOPs, bandwidth_GBps);
  point.ridge_distance = point.ridge / ai;
  point.regime = ai < point.ridge ? Regime::memory_bound : Regime::compute_bound;
  point.roof_TFLOPs = std::min(peak, bandwidth * ai) / 1e12;
  point.roof_time_ms = std::max(flops / peak * 1e3, bytes / bandwidth * 1e3);
  return point;
}

}  // namespace cfr
