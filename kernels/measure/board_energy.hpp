#pragma once

// One board's energy counter for the measurements of a command (`sweep
// --energy`'s rows, `ceilings --energy`'s figures, issue 20): its sensors
// opened through NVML, the quiet interval measured once before the first
// measurement (which sets every run's length, energy_meter.hpp), and the
// board's energy around a run of one measurement's launch.

#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/measure/board_sensors.hpp"
#include "kernels/measure/energy_meter.hpp"
#include "roofline/report/row_energy.hpp"

namespace cfr::measure {

// `unavailable` says why its measurements have no energy (no NVML, no
// counter, a counter too coarse); empty when they can.
struct BoardEnergy {
  std::unique_ptr<BoardSensors> sensors;
  IdleInterval idle;
  std::string unavailable;
};

// Opens `pci_bus_id`'s sensors through NVML (loaded here, by the first
// measurement that wants energy) and measures the quiet interval; throws
// nothing: a failure is the board's `unavailable`.
BoardEnergy open_board_energy(const std::string& pci_bus_id, const EnergyMeterOptions& options);

// The board's energy over a run of `launch`, `launch_ms` each (its timed
// median), for the board's run length, with the board's idle readings
// beside; a board without energy gives its reason. Throws CudaError naming
// measure_energy_run.
Energy measure_board_energy(const std::function<cudaError_t(cudaStream_t)>& launch,
                            double launch_ms, const BoardEnergy& board,
                            const EnergyMeterOptions& options, cudaStream_t stream);

}  // namespace cfr::measure
