#include <catch2/catch.hpp>

#include "roofline/evidence/log_axis.hpp"

using namespace cfr::evidence;

TEST_CASE("an axis ends at 1, 2 or 5 x 10^k around its values with a margin") {
  // 3 / 2 = 1.5 -> 1; 700 x 2 = 1400 -> 2000: no empty decade up to 10^4.
  const LogAxis axis = axis_covering({3, 700, -1, 0}, 2, 8, 0, 400);
  CHECK(axis.min() == Approx(1));
  CHECK(axis.max() == Approx(2000));
  CHECK(axis.to_pixel(1) == 0);
  CHECK(axis.to_pixel(2000) == Approx(400));
  CHECK(axis.from_pixel(axis.to_pixel(100)) == Approx(100));
  CHECK(axis.decades() == std::vector<double>{1, 10, 100, 1000});
  CHECK(axis.minor_ticks().size() == 3 * 8 + 1);  // 2..9 x 1, 10, 100, and 2000
}

TEST_CASE("a y axis runs upward, empty input gets a default, spans are capped") {
  const LogAxis y = axis_covering({60}, 2, 8, 500, 100);  // 30 -> 20, 120 -> 200
  CHECK(y.min() == Approx(20));
  CHECK(y.max() == Approx(200));
  CHECK(y.to_pixel(200) == Approx(100));
  CHECK(y.to_pixel(100) < y.to_pixel(60));                   // upward
  const LogAxis narrow = axis_covering({60}, 1.1, 8, 0, 1);  // 54.5 .. 66: widened to a decade
  CHECK(narrow.last - narrow.first >= 1);
  CHECK(narrow.min() <= 60);
  CHECK(narrow.max() >= 60);
  const LogAxis none = axis_covering({}, 2, 8, 0, 1);
  CHECK(none.min() == 1);
  CHECK(none.max() == 1000);
  const LogAxis wide = axis_covering({1e-30, 1e30}, 2, 8, 0, 1);
  CHECK(wide.last - wide.first == 8);
}

TEST_CASE("decade labels are plain numbers near 1 and exponents far from it") {
  CHECK(decade_label(0.01) == "0.01");
  CHECK(decade_label(1000) == "1000");
  CHECK(decade_label(1e6) == "1e+06");
  CHECK(decade_label(1e-7) == "1e-07");
}
