#include "kernels/measure/board_energy.hpp"

#include <exception>

#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/nvml_library.hpp"

namespace cfr::measure {

BoardEnergy open_board_energy(const std::string& pci_bus_id, const EnergyMeterOptions& options) {
  BoardEnergy board;
  try {
    board.sensors = std::make_unique<BoardSensors>(nvml(), pci_bus_id);
  } catch (const std::exception& error) {
    board.unavailable = error.what();
    return board;
  }
  const BoardSensors& sensors = *board.sensors;
  board.idle = measure_idle([&sensors] { return sensors.energy_mJ(); }, options);
  board.unavailable = board.idle.unavailable;
  return board;
}

Energy measure_board_energy(const std::function<cudaError_t(cudaStream_t)>& launch,
                            double launch_ms, const BoardEnergy& board,
                            const EnergyMeterOptions& options, cudaStream_t stream) {
  Energy energy;
  energy.counter = "nvmlDeviceGetTotalEnergyConsumption";
  energy.idle_readings = board.idle.readings;
  if (!board.unavailable.empty()) {
    energy.unavailable = board.unavailable;
    return energy;
  }
  const BoardSensors& sensors = *board.sensors;
  const cudaError_t error = measure_energy_run(
      launch, launch_ms, board.idle.run_seconds, [&sensors] { return sensors.energy_mJ(); },
      [&sensors](double t_s) { return sensors.probe(t_s); }, options, stream, energy);
  if (error != cudaSuccess) {
    throw CudaError(error, "measure_energy_run", "measure_energy_run: " + cuda_error_text(error));
  }
  return energy;
}

}  // namespace cfr::measure
