// The two sample judges of `compare` (roofline/evidence/sample_separation):
// nvbench-compare-robust's [min, q3] interval and a two-sided Mann-Whitney U
// test (normal approximation, tie and continuity corrections, as scipy's
// mannwhitneyu(method="asymptotic") computes it). Expected values by hand.
#include <catch2/catch.hpp>

#include <vector>

#include "roofline/evidence/sample_separation.hpp"

using namespace cfr;
using namespace cfr::evidence;

TEST_CASE("the robust interval is [min, q3] of the samples, the slow tail left out") {
  // Sorted {1, 2, 3, 4, 100}: q3 at position 0.75 * 4 = 3 -> 4; the outlier 100 is outside.
  const std::vector<double> samples{4, 100, 1, 3, 2};
  const TimingInterval interval = robust_interval(summarize(samples));
  CHECK(interval.low == 1);
  CHECK(interval.high == 4);
}

TEST_CASE("Mann-Whitney: fully apart sets, ties, and equal sets") {
  // {1,2,3} vs {4,5,6}: every pair has second > first, U = 9; mean 4.5, sigma^2 = 9 * 7 / 12
  // = 5.25; z = (4.5 - 0.5) / 2.2913 = 1.7457; p = erfc(z / sqrt 2) = 0.08086.
  const MannWhitney apart =
      mann_whitney(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6});
  CHECK(apart.u == 9);
  CHECK(apart.z == Approx(1.7457431));
  CHECK(apart.p_value == Approx(0.0808556));
  // Reversed: U = 0, the same p, z negative.
  const MannWhitney reversed =
      mann_whitney(std::vector<double>{4, 5, 6}, std::vector<double>{1, 2, 3});
  CHECK(reversed.u == 0);
  CHECK(reversed.z == Approx(-1.7457431));
  CHECK(reversed.p_value == Approx(apart.p_value));

  // {1,1,2} vs {1,2,2}: pooled ranks 1,1,1 -> 2 and 2,2,2 -> 5; second's rank sum 2 + 5 + 5
  // = 12, U = 12 - 6 = 6. Ties: two groups of 3, sum(t^3 - t) = 48; sigma^2 = 9 / 12 *
  // (7 - 48 / 30) = 4.05; z = (1.5 - 0.5) / 2.01246 = 0.49690; p = 0.61926.
  const MannWhitney ties = mann_whitney(std::vector<double>{1, 1, 2}, std::vector<double>{1, 2, 2});
  CHECK(ties.u == 6);
  CHECK(ties.z == Approx(0.4969040));
  CHECK(ties.p_value == Approx(0.6192568));

  // Every sample equal: sigma^2 = 4 / 12 * (5 - 60 / 12) = 0, nothing to test.
  const MannWhitney equal = mann_whitney(std::vector<double>{2, 2}, std::vector<double>{2, 2});
  CHECK(equal.p_value == 1);
  CHECK(equal.z == 0);
}

TEST_CASE("separation: intervals apart and the test at 5 a side; too few samples fail the test") {
  // Five samples a side 20% apart (the sample reports' spread): base [0.99, 1.01], new
  // [1.188, 1.212]; U = 25, mean 12.5, sigma^2 = 25 * 11 / 12; z = 12 / 4.78714 = 2.50672,
  // p = 0.012186.
  const std::vector<double> base{1, 1.01, 0.99, 1.02, 0.995};
  std::vector<double> slower;
  for (double x : base) slower.push_back(x * 1.2);
  const SampleSeparation s = separate_samples(base, slower);
  CHECK(s.gap == IntervalGap::above);
  CHECK(s.base.low == 0.99);
  CHECK(s.base.high == Approx(1.01));
  CHECK(s.test.p_value == Approx(0.0121858));
  CHECK(s.established(0.05));
  CHECK_FALSE(s.established(0.01));  // --significance 0.01 asks for more than 5 samples a side
  CHECK(separate_samples(slower, base).gap == IntervalGap::below);

  // Ten a side, apart (a sweep's fewest): U = 100, mean 50, sigma^2 = 100 * 21 / 12 = 175;
  // z = 49.5 / 13.2288 = 3.74185, p = 1.827e-4.
  std::vector<double> ten;
  std::vector<double> ten_later;
  for (int i = 0; i < 10; ++i) {
    ten.push_back(1 + 0.001 * i);
    ten_later.push_back(2 + 0.001 * i);
  }
  CHECK(separate_samples(ten, ten_later).test.p_value == Approx(1.827e-4).epsilon(1e-3));

  // Two a side, apart: U = 4, mean 2, sigma^2 = 4 * 5 / 12; z = 1.5 / 1.29099 = 1.16190,
  // p = 0.24528: the gap could be chance.
  const SampleSeparation few =
      separate_samples(std::vector<double>{1.0, 1.01}, std::vector<double>{1.2, 1.21});
  CHECK(few.gap == IntervalGap::above);
  CHECK(few.test.p_value == Approx(0.2452781));
  CHECK_FALSE(few.established(0.05));
}
