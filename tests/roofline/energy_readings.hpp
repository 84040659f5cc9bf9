#pragma once

// Recorded-like readings of a board's energy counter, for the tests of the
// energy figures, the report's energy object, `audit` and `table`: a board
// drawing `watts`, its counter adding watts x period every `period_s` from
// `start_mJ`, polled every `poll_s` for `seconds`; kept as the meter keeps
// them (kernels/measure/energy_meter.hpp): the first reading, each that saw a
// new value, the last. The numbers are of the order an H100-class board
// shows (hundreds of W, tens of ms), chosen by hand, not measured.

#include <cstdint>
#include <vector>

#include "roofline/core/energy_counter.hpp"
#include "roofline/report/ceiling_energy.hpp"
#include "roofline/report/row_energy.hpp"

namespace cfr::test {

inline std::vector<CounterReading> polled(double watts, double period_s, double poll_s,
                                          double seconds,
                                          std::uint64_t start_mJ = 123456789012ull) {
  const auto step = static_cast<std::uint64_t>(watts * period_s * 1000);
  auto counter_at = [&](double t) {
    return start_mJ + step * static_cast<std::uint64_t>((t + 1e-9) / period_s);
  };
  std::vector<CounterReading> kept{{0, counter_at(0)}};
  for (double t = poll_s; t < seconds; t += poll_s) {
    if (counter_at(t) != kept.back().mJ) kept.push_back({t, counter_at(t)});
  }
  kept.push_back({seconds, counter_at(seconds)});
  return kept;
}

// A row's energy: 3 s at 500 W over 1500 launches (1 J each, give or take one
// 10 J step over the run), idle at 70 W for 2.5 s, four probes.
inline Energy measured_energy() {
  Energy e;
  e.counter = "nvmlDeviceGetTotalEnergyConsumption";
  e.launches = 1500;
  e.readings = polled(500, 0.020, 0.001, 3.0);
  e.idle_readings = polled(70, 0.020, 0.001, 2.5, 123400000000ull);
  e.probes = {{0, 1980, 40, 110}, {1, 1980, 55, 490}, {2, 1965, 61, 505}, {3, 1950, 63, 500}};
  return e;
}

// A ceiling's energy: 3 s at `watts` over 1500 launches of `work_per_launch`
// FLOPs or bytes (the counter's 20 ms steps land on the 3 s exactly, so
// joules per launch is watts x 3 / 1500), the row's idle readings and probes
// beside; figures derived.
inline CeilingEnergy measured_ceiling_energy(double watts, double work_per_launch) {
  CeilingEnergy e;
  e.work_per_launch = work_per_launch;
  e.run = measured_energy();
  e.run.readings = polled(watts, 0.020, 0.001, 3.0);
  record_ceiling_energy(e);
  return e;
}

}  // namespace cfr::test
