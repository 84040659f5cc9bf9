#pragma once

#include <span>

namespace cfr {

// Summary of timing samples. Quartiles use linear interpolation between order
// statistics (the "type 7" rule of R and numpy's default), so q2 == median.
struct SampleSummary {
  int count = 0;
  double median = 0;
  double min = 0;
  double max = 0;
  double mean = 0;
  double stdev = 0;  // sample standard deviation (n - 1); 0 for a single sample
  double q1 = 0;
  double q3 = 0;
  double relative_stdev() const { return mean > 0 ? stdev / mean : 0; }
};

// Empty input gives a zero summary with count 0.
SampleSummary summarize(std::span<const double> samples);

double quantile(std::span<const double> sorted_samples, double q);

}  // namespace cfr
