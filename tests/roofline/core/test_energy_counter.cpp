#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "roofline/core/energy_counter.hpp"
#include "tests/roofline/energy_readings.hpp"

using namespace cfr;

namespace {

using cfr::test::polled;

std::string reason_of(const OrReason<CounterInterval>& interval) {
  const auto* why = std::get_if<std::string>(&interval);
  return why != nullptr ? *why : std::string();
}

}  // namespace

TEST_CASE("a steady board: period and resolution from the readings, watts within one step") {
  // 500 W, an update every 20 ms (10 000 mJ a step), polled every 1 ms for 3 s.
  const auto readings = polled(500, 0.020, 0.001, 3.0);
  const auto interval = counter_interval(readings);
  REQUIRE(std::holds_alternative<CounterInterval>(interval));
  const CounterInterval& i = std::get<CounterInterval>(interval);
  CHECK(i.cadence.resolution_mJ == 10000);
  CHECK(i.cadence.update_period_s == Approx(0.020).margin(0.0015));
  CHECK(i.cadence.changes == 150);
  CHECK(i.seconds == 3.0);
  CHECK(i.joules == Approx(1500).margin(10));  // one 10 J step at most
  CHECK(i.watts() == Approx(500).epsilon(0.01));
}

TEST_CASE("joules per launch and FLOP per joule") {
  const CounterInterval interval{.seconds = 2, .joules = 800, .cadence = {}};
  CHECK(joules_per_launch(interval, 400) == 2);
  // 1 TFLOP at 2 J a launch: 0.5 TFLOP/J.
  CHECK(flop_per_joule(1e12, 2) == 5e11);
}

TEST_CASE("a counter that goes down is a reset, never unwrapped") {
  auto readings = polled(400, 0.020, 0.001, 3.0);
  readings[readings.size() / 2].mJ = 5;  // the driver reloaded mid-run
  const std::string why = reason_of(counter_interval(readings));
  CHECK(why.find("went down") != std::string::npos);
  CHECK(why.find("not a 64-bit wrap") != std::string::npos);
}

TEST_CASE("a counter near the top of 64 bits counts exactly; past it is a reset") {
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  auto readings = polled(500, 0.020, 0.001, 3.0, top - 2'000'000);
  const auto interval = counter_interval(readings);
  REQUIRE(std::holds_alternative<CounterInterval>(interval));
  CHECK(std::get<CounterInterval>(interval).joules == Approx(1500).margin(10));
  // What a wrapped counter would read: small again.
  readings.push_back({3.5, 1234});
  CHECK(reason_of(counter_interval(readings)).find("went down") != std::string::npos);
}

TEST_CASE("a counter that does not move, or moves once, stalls") {
  const std::vector<CounterReading> still{{0, 1000}, {0.5, 1000}, {1.0, 1000}};
  CHECK(reason_of(counter_interval(still)).find("stalled: 0 changes") != std::string::npos);
  const std::vector<CounterReading> once{{0, 1000}, {0.5, 2000}, {1.0, 2000}};
  CHECK(reason_of(counter_interval(once)).find("stalled: 1 change ") != std::string::npos);
}

TEST_CASE("missing readings: none or one") {
  CHECK(reason_of(counter_interval({})).find("0 readings") != std::string::npos);
  const std::vector<CounterReading> one{{0, 1000}};
  CHECK(reason_of(counter_interval(one)).find("1 reading,") != std::string::npos);
}

TEST_CASE("readings out of time order are refused") {
  const std::vector<CounterReading> r{{0, 1000}, {0.2, 2000}, {0.2, 3000}, {0.4, 4000}};
  CHECK(reason_of(counter_interval(r)).find("is not after") != std::string::npos);
}

TEST_CASE("the 1% rule: a run shorter than 100 update periods has no energy") {
  // 1.5 s at a 20 ms period: 1.3 %.
  const std::string why = reason_of(counter_interval(polled(500, 0.020, 0.001, 1.5)));
  CHECK(why.find("run too short") != std::string::npos);
  // 2.5 s: 0.8 %.
  CHECK(std::holds_alternative<CounterInterval>(counter_interval(polled(500, 0.020, 0.001, 2.5))));
}

TEST_CASE("the 1% rule: a step over 1% of the energy has no energy") {
  // A board whose power stops: 3 steps of 100 mJ in 10 ms periods, then none
  // until 1.2 s; the period passes (0.8 %), a step is 33 % of the energy.
  const std::vector<CounterReading> r{{0, 0}, {0.01, 100}, {0.02, 200}, {0.03, 300}, {1.2, 300}};
  CHECK(reason_of(counter_interval(r)).find("too coarse") != std::string::npos);
}

TEST_CASE("seconds_for_rule: a run that long at least as hot passes the rule") {
  // Idle at 70 W, 20 ms updates: 1400 mJ a step.
  const auto idle = counter_cadence(polled(70, 0.020, 0.001, 1.0));
  REQUIRE(std::holds_alternative<CounterCadence>(idle));
  const CounterCadence& cadence = std::get<CounterCadence>(idle);
  // max(0.02 / 0.01, 1.4 J / 0.01 / 70 W) = 2 s, with the margin 2.5 s.
  CHECK(seconds_for_rule(cadence, 70) ==
        Approx(1.25 * std::max(100 * cadence.update_period_s, 1.4 / 0.01 / 70)));
  const double seconds = seconds_for_rule(cadence, 70);
  for (double watts : {70.0, 300.0, 700.0}) {
    INFO(watts);
    CHECK(std::holds_alternative<CounterInterval>(
        counter_interval(polled(watts, 0.020, 0.001, seconds))));
  }
}
