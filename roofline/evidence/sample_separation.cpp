#include "sample_separation.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace cfr::evidence {

TimingInterval robust_interval(const SampleSummary& summary) {
  return {summary.min, summary.q3};
}

MannWhitney mann_whitney(std::span<const double> first, std::span<const double> second) {
  const auto n1 = static_cast<double>(first.size());
  const auto n2 = static_cast<double>(second.size());
  std::vector<std::pair<double, bool>> pooled;  // value, from the second set
  pooled.reserve(first.size() + second.size());
  for (double x : first) pooled.emplace_back(x, false);
  for (double x : second) pooled.emplace_back(x, true);
  std::sort(pooled.begin(), pooled.end());

  double second_rank_sum = 0;
  double tie_term = 0;  // sum of t^3 - t over groups of equal values
  for (std::size_t begin = 0; begin < pooled.size();) {
    std::size_t end = begin;
    while (end < pooled.size() && pooled[end].first == pooled[begin].first) ++end;
    const double ties = static_cast<double>(end - begin);
    const double average_rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2;
    for (std::size_t i = begin; i < end; ++i)
      second_rank_sum += pooled[i].second ? average_rank : 0;
    tie_term += ties * ties * ties - ties;
    begin = end;
  }
  MannWhitney out;
  out.u = second_rank_sum - n2 * (n2 + 1) / 2;
  const double total = n1 + n2;
  if (total < 2) return out;
  const double variance = n1 * n2 / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(variance > 0)) return out;  // every sample equal: nothing to test
  const double shift = out.u - n1 * n2 / 2;
  const double magnitude = std::max(0.0, std::fabs(shift) - 0.5) / std::sqrt(variance);
  out.z = shift < 0 ? -magnitude : magnitude;
  out.p_value = std::min(1.0, std::erfc(magnitude / std::sqrt(2.0)));
  return out;
}

SampleSeparation separate_samples(std::span<const double> base, std::span<const double> next) {
  SampleSeparation out;
  out.base = robust_interval(summarize(base));
  out.next = robust_interval(summarize(next));
  if (out.next.low > out.base.high) {
    out.gap = IntervalGap::above;
  } else if (out.next.high < out.base.low) {
    out.gap = IntervalGap::below;
  }
  out.test = mann_whitney(base, next);
  out.base_count = base.size();
  out.new_count = next.size();
  return out;
}

}  // namespace cfr::evidence
