// Pins that device_count() (kernels/measure/device_info.hpp) is safe to call
// on a machine without a GPU or driver: the CPU-only CI machine is one.
#include <catch2/catch.hpp>

#include "kernels/measure/device_info.hpp"

TEST_CASE("device_count never throws, also without a GPU or driver", "[device_info]") {
  int count = -1;
  REQUIRE_NOTHROW(count = cfr::measure::device_count());
  CHECK(count >= 0);
}
