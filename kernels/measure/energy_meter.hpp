#pragma once

// The board's energy around a row's launches (`sweep --energy`, issue 20):
// the counter polled during a quiet interval once per device, which sets how
// long each row's run must last for the 1 % rule of
// roofline/core/energy_counter.hpp, then polled during each row's run of
// back-to-back launches. Readings are kept as that header says (first, each
// change, last). Host code over the CUDA runtime; the readings come from
// functions, so the polling is tested without a board.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "roofline/core/energy_counter.hpp"
#include "roofline/core/errors.hpp"
#include "roofline/report/row_energy.hpp"

namespace cfr::measure {

using ReadCounter = std::function<OrReason<std::uint64_t>()>;
using ReadProbe = std::function<EnergyProbe(double t_s)>;

struct EnergyMeterOptions {
  double poll_s = 0.0005;    // between two counter reads: well under any update period
  double max_idle_s = 30;    // the longest quiet interval before giving up
  int cadence_changes = 10;  // changes seen at rest before the run length is worked out
  int probes_between = 3;    // sensor probes during a run, besides before and after
};

// Keeps a counter's readings from its first poll: the first, each that saw a
// new value, and the one finish() takes.
class CounterPoller {
 public:
  explicit CounterPoller(ReadCounter read);
  // Reads once; the reason a read failed, or nullopt.
  std::optional<std::string> poll();
  // Reads once more and keeps it whatever its value: the interval's end.
  std::optional<std::string> finish();
  double elapsed_s() const;
  const std::vector<CounterReading>& readings() const { return readings_; }

 private:
  std::optional<std::string> read(bool keep_always);
  ReadCounter read_;
  double start_ = 0;
  std::vector<CounterReading> readings_;
};

// The device's quiet interval, and how long each row's run must last.
struct IdleInterval {
  std::vector<CounterReading> readings;
  // Why no run length could be worked out (a counter that cannot be read,
  // stalls at rest, or needs longer than max_idle_s); empty when it could.
  std::string unavailable;
  double run_seconds = 0;  // seconds_for_rule at the idle power
};

// Polls the counter with nothing launched until it has changed
// cadence_changes times, then until the interval itself passes the rule.
IdleInterval measure_idle(const ReadCounter& read, const EnergyMeterOptions& options);

// Runs `launch` back to back on `stream` for at least `seconds` (two batches
// of about 10 ms of launches in flight, `launch_ms` each, so the GPU does not
// wait for the host), polling the counter throughout and probing the sensors
// before, `probes_between` times during and after. Fills energy's counter,
// launches, readings and probes; a counter that cannot be read sets
// energy.unavailable. Returns the first failing launch's or CUDA call's
// status (rule 2 of roofline/core/errors.hpp).
cudaError_t measure_energy_run(const std::function<cudaError_t(cudaStream_t)>& launch,
                               double launch_ms, double seconds, const ReadCounter& read,
                               const ReadProbe& probe, const EnergyMeterOptions& options,
                               cudaStream_t stream, Energy& energy);

}  // namespace cfr::measure
