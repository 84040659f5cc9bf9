#include <catch2/catch.hpp>

#include "roofline/evidence/printed_interval.hpp"

using namespace cfr::evidence;

TEST_CASE("a printed number stands for half a unit of its last decimal either side") {
  CHECK(printed(0.42).lo == Approx(0.415));
  CHECK(printed(0.42).hi == Approx(0.425));
  CHECK(printed(549.8).lo == Approx(549.75));
  CHECK(printed(1211).hi == Approx(1211.5));
  // "88.0" reaches us as 88: the interval is the wider [87.5, 88.5], never narrower.
  CHECK(printed(88.0).lo == Approx(87.5));
  CHECK(printed(88.0).hi == Approx(88.5));
}

TEST_CASE("interval arithmetic bounds every combination of the ends") {
  // The seed's V100 N=1,024 row: 2.15 GFLOP / 0.42 ms is anywhere in [2.145/0.425, 2.155/0.415].
  const Interval rate = printed(2.15) / printed(0.42);
  CHECK(rate.lo == Approx(2.145 / 0.425));
  CHECK(rate.hi == Approx(2.155 / 0.415));
  CHECK_FALSE(rate.overlaps(printed(2.1)));
  const Interval product = printed(9.2) * printed(3.8);  // §5.2: 9.2x below at AI_eff 3.8
  CHECK(product.contains(31.4 / 0.9));
  CHECK(exact(3).contains(3));
  CHECK(exact(3).middle() == 3);
}
