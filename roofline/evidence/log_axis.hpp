#pragma once

// A base-10 logarithmic axis whose ends are 1, 2 or 5 times a power of ten,
// mapped onto a pixel range. The roofline chart uses one for each axis.

#include <string>
#include <vector>

namespace cfr::evidence {

struct LogAxis {
  double first = 0;        // the axis runs from 10^first ...
  double last = 1;         // ... to 10^last
  double pixel_first = 0;  // pixel of 10^first
  double pixel_last = 1;   // pixel of 10^last (smaller than pixel_first for a y axis)

  double min() const;
  double max() const;
  // Values outside the axis map outside the pixel range; non-positive values
  // map to pixel_first.
  double to_pixel(double value) const;
  double from_pixel(double pixel) const;
  std::vector<double> decades() const;  // the powers of ten on the axis
  // 2..9 times each power of ten, on the axis, the powers excluded.
  std::vector<double> minor_ticks() const;
};

// The tightest axis holding every positive value with a margin of a factor
// `pad` on both sides, its ends snapped outward to 1, 2 or 5 x 10^k (so the
// chart spends no empty decade), at least one decade wide and at most
// `max_decades` (the high end wins). No positive value: 10^0 .. 10^3.
LogAxis axis_covering(const std::vector<double>& values, double pad, int max_decades,
                      double pixel_first, double pixel_last);

// "0.01", "1", "1000", then "1e+06" style past 10^5.
std::string decade_label(double value);

}  // namespace cfr::evidence
