#pragma once

// A base-10 logarithmic axis snapped to whole decades, mapped onto a pixel
// range. The roofline chart uses one for each axis.

#include <string>
#include <vector>

namespace cfr::evidence {

struct LogAxis {
  int first_decade = 0;    // the axis runs from 10^first_decade ...
  int last_decade = 1;     // ... to 10^last_decade
  double pixel_first = 0;  // pixel of 10^first_decade
  double pixel_last = 1;   // pixel of 10^last_decade (smaller than pixel_first for a y axis)

  double min() const;
  double max() const;
  // Values outside the axis map outside the pixel range; non-positive values
  // map to pixel_first.
  double to_pixel(double value) const;
  double from_pixel(double pixel) const;
  std::vector<double> decades() const;  // 10^first ... 10^last
  // 2..9 times each decade, inside the axis.
  std::vector<double> minor_ticks() const;
};

// The smallest decade-aligned axis holding every positive value with a
// margin of a factor `pad` on both sides, at least one decade and at most
// `max_decades` wide (the high end wins). No positive value: 10^0 .. 10^3.
LogAxis axis_covering(const std::vector<double>& values, double pad, int max_decades,
                      double pixel_first, double pixel_last);

// "0.01", "1", "1000", then "1e+06" style past 10^5.
std::string decade_label(double value);

}  // namespace cfr::evidence
