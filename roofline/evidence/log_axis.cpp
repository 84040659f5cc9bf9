#include "log_axis.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cfr::evidence {

namespace {

// Powers of ten within this many decades of an axis end count as on it.
constexpr double on_axis = 1e-9;

// log10 of the largest 1, 2 or 5 x 10^k not above v (snap_down) or the
// smallest not below it (snap_up).
double snap_down(double v) {
  const double k = std::floor(std::log10(v));
  for (double m : {5.0, 2.0, 1.0}) {
    if (m * std::pow(10.0, k) <= v * (1 + on_axis)) return k + std::log10(m);
  }
  return k;
}
double snap_up(double v) {
  const double k = std::floor(std::log10(v));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * std::pow(10.0, k) >= v * (1 - on_axis)) return k + std::log10(m);
  }
  return k + 1;
}

}  // namespace

double LogAxis::min() const {
  return std::pow(10.0, first);
}
double LogAxis::max() const {
  return std::pow(10.0, last);
}

double LogAxis::to_pixel(double value) const {
  if (!(value > 0)) return pixel_first;
  const double t = (std::log10(value) - first) / (last - first);
  return pixel_first + t * (pixel_last - pixel_first);
}

double LogAxis::from_pixel(double pixel) const {
  const double t = (pixel - pixel_first) / (pixel_last - pixel_first);
  return std::pow(10.0, first + t * (last - first));
}

std::vector<double> LogAxis::decades() const {
  std::vector<double> out;
  for (double k = std::ceil(first - on_axis); k <= last + on_axis; ++k) {
    out.push_back(std::pow(10.0, k));
  }
  return out;
}

std::vector<double> LogAxis::minor_ticks() const {
  std::vector<double> out;
  for (double k = std::floor(first); k <= last; ++k) {
    for (int m = 2; m <= 9; ++m) {
      const double v = m * std::pow(10.0, k);
      if (v >= min() * (1 - on_axis) && v <= max() * (1 + on_axis)) out.push_back(v);
    }
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
    axis.first = std::clamp(snap_down(lo / pad), -300.0, 300.0);
    axis.last = std::clamp(snap_up(hi * pad), -300.0, 300.0);
  }
  if (axis.last - axis.first < 1) {
    // Too narrow to read as a log axis: one decade around the middle.
    const double middle = (axis.first + axis.last) / 2;
    axis.first = snap_down(std::pow(10.0, middle - 0.5));
    axis.last = std::max(snap_up(std::pow(10.0, middle + 0.5)), axis.first + 1);
  }
  axis.first = std::max(axis.first, axis.last - max_decades);
  return axis;
}

std::string decade_label(double value) {
  const int k = static_cast<int>(std::lround(std::log10(value)));
  if (k >= -4 && k <= 5) return fmt::format("{:g}", value);
  return fmt::format("1e{:+03d}", k);
}

}  // namespace cfr::evidence
