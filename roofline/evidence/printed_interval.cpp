#include "printed_interval.hpp"

#include <algorithm>
#include <cmath>

namespace cfr::evidence {

Interval printed(double value) {
  double unit = 1;
  for (int decimals = 0; decimals <= 6; ++decimals) {
    const double scaled = value / unit;
    if (std::fabs(scaled - std::round(scaled)) <= 1e-9 * std::max(1.0, std::fabs(scaled))) break;
    unit /= 10;
  }
  return {value - unit / 2, value + unit / 2};
}

Interval exact(double value) {
  return {value, value};
}

Interval operator*(Interval a, Interval b) {
  const auto [lo, hi] = std::minmax({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
  return {lo, hi};
}

Interval operator/(Interval a, Interval b) {
  return a * Interval{1 / b.hi, 1 / b.lo};
}

}  // namespace cfr::evidence
