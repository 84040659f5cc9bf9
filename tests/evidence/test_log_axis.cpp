#include <catch2/catch.hpp>

#include "roofline/evidence/log_axis.hpp"

using namespace cfr::evidence;

TEST_CASE("an axis snaps to whole decades around its values with a margin") {
  // 3 / 2 = 1.5 -> 10^0; 700 x 2 = 1400 -> 10^4.
  const LogAxis axis = axis_covering({3, 700, -1, 0}, 2, 8, 0, 400);
  CHECK(axis.first_decade == 0);
  CHECK(axis.last_decade == 4);
  CHECK(axis.to_pixel(1) == 0);
  CHECK(axis.to_pixel(100) == Approx(200));
  CHECK(axis.from_pixel(300) == Approx(1000));
  CHECK(axis.decades() == std::vector<double>{1, 10, 100, 1000, 10000});
  CHECK(axis.minor_ticks().size() == 4 * 8);
}

TEST_CASE("a y axis runs upward, empty input gets a default, spans are capped") {
  const LogAxis y = axis_covering({60}, 2, 8, 500, 100);  // 30 -> 10^1, 120 -> 10^3
  CHECK(y.first_decade == 1);
  CHECK(y.last_decade == 3);
  CHECK(y.to_pixel(100) == Approx(300));
  const LogAxis none = axis_covering({}, 2, 8, 0, 1);
  CHECK(none.first_decade == 0);
  CHECK(none.last_decade == 3);
  const LogAxis wide = axis_covering({1e-30, 1e30}, 2, 8, 0, 1);
  CHECK(wide.last_decade - wide.first_decade == 8);
}

TEST_CASE("decade labels are plain numbers near 1 and exponents far from it") {
  CHECK(decade_label(0.01) == "0.01");
  CHECK(decade_label(1000) == "1000");
  CHECK(decade_label(1e6) == "1e+06");
  CHECK(decade_label(1e-7) == "1e-07");
}
