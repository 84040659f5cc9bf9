// The L2 flush's two modes (kernels/measure/l2_flush.hpp) by name, and how a
// ceiling's method sentence says which one its samples had.
#include <catch2/catch.hpp>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/measure/l2_flush.hpp"

using namespace cfr;

TEST_CASE("the flush modes parse from their names and only from them") {
  for (measure::L2FlushMode mode : {measure::L2FlushMode::read, measure::L2FlushMode::memset}) {
    CHECK(measure::parse_l2_flush_mode(measure::to_string(mode)) == mode);
  }
  CHECK(measure::to_string(measure::L2FlushMode::read) == "read");
  CHECK_FALSE(measure::parse_l2_flush_mode("evict").has_value());
  CHECK_FALSE(measure::parse_l2_flush_mode("").has_value());
}

TEST_CASE("a ceiling's method says how its L2 was flushed") {
  measure::TimingOptions options;
  CHECK(ceilings::detail::l2_state(options) ==
        "L2 emptied before each sample by a read of twice its size");
  options.l2_flush_mode = measure::L2FlushMode::memset;
  CHECK(ceilings::detail::l2_state(options) ==
        "L2 flushed before each sample by a memset of twice its size");
  options.flush_l2 = false;
  CHECK(ceilings::detail::l2_state(options) == "hot");
}
