#pragma once

// What the board's energy counter read around one row (`sweep --energy`),
// and the figures derived from it (docs/energy.md, docs/report-schema.md,
// "energy"). The readings are the evidence, as a timing's samples are;
// energy_figures() derives everything else from them and the row's counted
// FLOPs, and `audit` calls it again.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/energy_counter.hpp"
#include "roofline/core/errors.hpp"

namespace cfr {

// The board's sensors at one moment of the run (NVML): what the counter's
// joules ran at. A value NVML would not give is 0.
struct EnergyProbe {
  double t_s = 0;  // seconds since the run's first counter reading
  double sm_clock_MHz = 0;
  double temperature_C = 0;
  double power_W = 0;  // nvmlDeviceGetPowerUsage, the reading nvidia-smi prints

  friend bool operator==(const EnergyProbe&, const EnergyProbe&) = default;
};

// Figures of the readings; each absent where its readings cannot give it
// (idle_W, where the quiet interval broke the 1 % rule).
struct EnergyDerived {
  std::optional<double> joules_per_launch;  // the run's joules / launches
  std::optional<double> average_W;          // the run's joules / its seconds
  std::optional<double> flop_per_J;         // counted FLOPs / joules_per_launch
  std::optional<double> run_s;
  std::optional<double> resolution_mJ;  // counter_cadence over the run's readings
  std::optional<double> update_period_s;
  // The board at rest, measured once per device before its first row; beside
  // average_W, never subtracted from it.
  std::optional<double> idle_W;
  std::optional<double> sm_clock_MHz;   // mean of the probes
  std::optional<double> temperature_C;  // the hottest probe
  std::optional<double> power_W;        // mean of the probes' nvidia-smi reading
};

struct Energy {
  std::string counter;  // "nvmlDeviceGetTotalEnergyConsumption"
  // Empty when the readings give figures; otherwise why not (no NVML, a board
  // without the counter, a counter that stalled or reset, a run too short).
  std::string unavailable;
  std::int64_t launches = 0;                  // between the first and the last reading
  std::vector<CounterReading> readings;       // the run's: first, each change, last
  std::vector<EnergyProbe> probes;            // before, during, after the run
  std::vector<CounterReading> idle_readings;  // the device's quiet interval
  EnergyDerived derived;

  bool collected() const { return unavailable.empty(); }
};

// The figures of `energy`'s readings for launches of `counted_flops` FLOPs,
// or why the run's readings give none (counter_interval's reasons, no
// launches).
OrReason<EnergyDerived> energy_figures(const Energy& energy, double counted_flops);

// Sets energy.derived from energy_figures, or energy.unavailable to its
// reason (figures cleared); an energy already unavailable is left as it is.
void record_energy_figures(Energy& energy, double counted_flops);

}  // namespace cfr
