#include "log_axis.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cfr::evidence {

double LogAxis::min() const {
  return std::pow(10.0, first_decade);
}
double LogAxis::max() const {
  return std::pow(10.0, last_decade);
}

double LogAxis::to_pixel(double value) const {
  if (!(value > 0)) return pixel_first;
  const double t = (std::log10(value) - first_decade) / (last_decade - first_decade);
  return pixel_first + t * (pixel_last - pixel_first);
}

double LogAxis::from_pixel(double pixel) const {
  const double t = (pixel - pixel_first) / (pixel_last - pixel_first);
  return std::pow(10.0, first_decade + t * (last_decade - first_decade));
}

std::vector<double> LogAxis::decades() const {
  std::vector<double> out;
  for (int k = first_decade; k <= last_decade; ++k) out.push_back(std::pow(10.0, k));
  return out;
}

std::vector<double> LogAxis::minor_ticks() const {
  std::vector<double> out;
  for (int k = first_decade; k < last_decade; ++k) {
    for (int m = 2; m <= 9; ++m) out.push_back(m * std::pow(10.0, k));
  }
  return out;
}

LogAxis axis_covering(const std::vector<double>& values, double pad, int max_decades,
                      double pixel_first, double pixel_last) {
  double lo = 0;
  double hi = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    lo = lo > 0 ? std::min(lo, v) : v;
    hi = std::max(hi, v);
  }
  LogAxis axis{0, 3, pixel_first, pixel_last};
  if (lo > 0) {
    // Clamped so that a denormal or huge value cannot make an absurd axis.
    axis.first_decade =
        static_cast<int>(std::clamp(std::floor(std::log10(lo / pad)), -300.0, 300.0));
    axis.last_decade = static_cast<int>(std::clamp(std::ceil(std::log10(hi * pad)), -300.0, 300.0));
  }
  axis.last_decade = std::max(axis.last_decade, axis.first_decade + 1);
  axis.first_decade = std::max(axis.first_decade, axis.last_decade - max_decades);
  return axis;
}

std::string decade_label(double value) {
  const int k = static_cast<int>(std::lround(std::log10(value)));
  if (k >= -4 && k <= 5) return fmt::format("{:g}", value);
  return fmt::format("1e{:+03d}", k);
}

}  // namespace cfr::evidence
