#include "roofline/core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cfr {

double quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary summary;
  if (samples.empty()) return summary;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  summary.count = static_cast<int>(sorted.size());
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.median = quantile(sorted, 0.5);
  summary.q1 = quantile(sorted, 0.25);
  summary.q3 = quantile(sorted, 0.75);
  summary.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / summary.count;
  if (summary.count > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - summary.mean) * (x - summary.mean);
    summary.stdev = std::sqrt(squares / (summary.count - 1));
  }
  return summary;
}

}  // namespace cfr
