#pragma once

// Do two sets of timing samples show a change, whatever their medians say?
// Two judges over the raw samples, which `compare` asks together:
// - nvbench-compare-robust's interval [min, q3] of each side: the two are
//   apart when one lies wholly above the other;
// - a two-sided Mann–Whitney U test: how likely a shift this clear is
//   between two sample sets drawn from one distribution. It brings what the
//   interval lacks, the sample count: two samples a side can fall apart by
//   chance.

#include <cstddef>
#include <span>

#include "roofline/core/statistics.hpp"

namespace cfr::evidence {

// [min, q3] around the median (nvbench-compare-robust): the low end is the
// time the kernel takes undisturbed; the slow tail above q3 (a preemption, a
// clock dip) is left out so that one outlier does not hide a change.
struct TimingInterval {
  double low = 0;
  double high = 0;
};
TimingInterval robust_interval(const SampleSummary& summary);

struct MannWhitney {
  double u = 0;        // pairs (first, second) with second > first; a tie counts one half
  double z = 0;        // normal approximation, tie- and continuity-corrected
  double p_value = 1;  // two-sided; 1 when every sample is equal
};
// Average ranks over both sets; sigma^2 = n1 n2 / 12 * (N + 1 - sum(t^3 - t) / (N (N - 1)))
// for tie groups of size t; z = (|U - n1 n2 / 2| - 1/2) / sigma, floored at 0.
MannWhitney mann_whitney(std::span<const double> first, std::span<const double> second);

// Where the second set's interval lies against the first's.
enum class IntervalGap { overlap, above, below };

struct SampleSeparation {
  TimingInterval base;
  TimingInterval next;
  IntervalGap gap = IntervalGap::overlap;
  MannWhitney test;  // first = base, second = new
  std::size_t base_count = 0;
  std::size_t new_count = 0;

  // The samples establish a change: the intervals are apart and the test
  // rejects "no shift" at this level.
  bool established(double significance) const {
    return gap != IntervalGap::overlap && test.p_value < significance;
  }
};

// Both spans non-empty.
SampleSeparation separate_samples(std::span<const double> base, std::span<const double> next);

}  // namespace cfr::evidence
