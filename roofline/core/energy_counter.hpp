#pragma once

// Energy from a board's total-energy counter (NVML's
// nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded,
// the whole board, docs/energy.md), read as a series of (time, counter)
// readings around an interval. Pure: the readings come from
// kernels/measure/energy_meter.hpp or a report, the figures go to the report.
//
// The counter moves in steps: it is updated every so often (its update
// period) by some number of millijoules. A reading taken between two updates
// lags the energy spent by up to one update, at each end of an interval. The
// rule (issue 20): an interval's energy is a figure only when the counter's
// resolution is under 1 % of the energy it measured and its update period
// under 1 % of its length; otherwise the interval gets a reason.
//
// Both are measured from the readings themselves, which poll the counter
// faster than it updates (kept: the first reading, every reading that saw a
// new value, the last reading):
// - resolution: the smallest nonzero step between consecutive readings (an
//   upper bound of the counter's unit; a step spans at least one update);
// - update period: the median time between the readings that saw a change
//   (the median, so one poll that came late does not set it).
//
// A counter that goes down is not unwrapped. It is 64 bits of millijoules:
// wrapping needs 2^64 mJ, about 800 000 years at 700 W, so a smaller reading
// means the driver reloaded (the counter starts again at 0) or the readings
// are of another device; either way the interval has no energy.

#include <cstdint>
#include <span>
#include <string>

#include "roofline/core/errors.hpp"

namespace cfr {

struct CounterReading {
  double t_s = 0;        // seconds since the interval's first reading
  std::uint64_t mJ = 0;  // the counter's value

  friend bool operator==(const CounterReading&, const CounterReading&) = default;
};

// How the counter moves, measured from readings.
struct CounterCadence {
  std::uint64_t resolution_mJ = 0;  // smallest nonzero step
  double update_period_s = 0;       // median time between changes
  int changes = 0;                  // readings that saw a new value
};

// An interval's energy under the 1 % rule.
struct CounterInterval {
  double seconds = 0;  // last reading's time - first's
  double joules = 0;   // last reading's counter - first's
  CounterCadence cadence;

  double watts() const { return joules / seconds; }
};

// The 1 % of the rule, as a fraction.
inline constexpr double counter_rule_fraction = 0.01;

// The cadence, or why the readings cannot give one: fewer than two readings
// (missing), a reading whose time is not after the one before, a counter that
// went down (reset), or fewer than two changes (stalled: no period between
// changes to measure).
OrReason<CounterCadence> counter_cadence(std::span<const CounterReading> readings);

// The interval from the first reading to the last, or why it has no energy:
// counter_cadence's reasons, or the rule (resolution or update period not
// under 1 % of the interval's energy or length).
OrReason<CounterInterval> counter_interval(std::span<const CounterReading> readings);

// How long an interval must last for the rule to hold, with a counter of
// `cadence` on a board drawing at least `min_watts`: 1/fraction update
// periods, and long enough that 1/fraction resolutions of energy are spent
// (a margin of `margin` over both, so a period measured a little short does
// not fail the rule).
double seconds_for_rule(const CounterCadence& cadence, double min_watts, double margin = 1.25);

// Joules per launch, and FLOP per joule, of an interval spent on `launches`
// launches of `flops` FLOPs each.
double joules_per_launch(const CounterInterval& interval, std::int64_t launches);
double flop_per_joule(double flops, double joules_per_launch);

}  // namespace cfr
