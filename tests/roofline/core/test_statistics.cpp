#include <catch2/catch.hpp>

#include <vector>

#include "roofline/core/statistics.hpp"

using namespace cfr;

TEST_CASE("summary of samples: median, quartiles (type 7), sample stdev") {
  const std::vector<double> samples{4, 1, 3, 2, 5};
  const SampleSummary s = summarize(samples);
  CHECK(s.count == 5);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == 3);
  CHECK(s.q1 == 2);
  CHECK(s.q3 == 4);
  CHECK(s.stdev == Approx(1.5811388));  // sqrt(10 / 4)
  CHECK(s.relative_stdev() == Approx(1.5811388 / 3));
}

TEST_CASE("even count interpolates the median; one sample has zero spread; none is empty") {
  const std::vector<double> even{1, 2, 3, 4};
  CHECK(summarize(even).median == 2.5);
  CHECK(summarize(even).q1 == 1.75);
  const std::vector<double> one{7};
  CHECK(summarize(one).stdev == 0);
  CHECK(summarize(one).median == 7);
  CHECK(summarize({}).count == 0);
}
