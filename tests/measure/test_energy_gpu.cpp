// Pins the board's energy counter on a real board (kernels/measure/
// board_sensors.hpp, energy_meter.hpp): the counter advances across a busy
// run of launches, the run's readings pass the 1 % rule at the run length the
// quiet interval sets, and the board draws more busy than at rest. Skipped
// without NVML or without the counter (a board before Volta); the measured
// resolution and update period are printed for docs/energy.md.
#include <catch2/catch.hpp>

#include <cstdint>
#include <iostream>
#include <memory>
#include <variant>

#include "kernels/measure/board_sensors.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"
#include "kernels/measure/energy_meter.hpp"
#include "kernels/measure/nvml_library.hpp"
#include "tests/measure/trivial_kernels.hpp"

using namespace cfr;
using namespace cfr::measure;

namespace {

// The device's sensors, or null (and the reason printed) without them.
std::unique_ptr<BoardSensors> open_sensors() {
  int device = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  try {
    auto sensors = std::make_unique<BoardSensors>(nvml(), query_device(device).pci_bus_id);
    const OrReason<std::uint64_t> first = sensors->energy_mJ();
    if (const auto* why = std::get_if<std::string>(&first)) {
      WARN("skipped: " << *why);
      return nullptr;
    }
    return sensors;
  } catch (const std::runtime_error& error) {
    WARN("skipped: " << error.what());
    return nullptr;
  }
}

}  // namespace

TEST_CASE("the energy counter advances over a busy run and passes the 1% rule", "[energy]") {
  const auto sensors = open_sensors();
  if (!sensors) return;
  const ReadCounter read = [&] { return sensors->energy_mJ(); };
  const IdleInterval idle = measure_idle(read, {});
  INFO(idle.unavailable);
  REQUIRE(idle.unavailable.empty());
  const auto quiet = counter_interval(idle.readings);
  REQUIRE(std::holds_alternative<CounterInterval>(quiet));
  const CounterInterval& rest = std::get<CounterInterval>(quiet);

  const std::size_t n = 1 << 26;  // 256 MiB of floats: each launch streams DRAM
  DeviceBuffer out(n * sizeof(float));
  CudaStream stream;
  Energy energy;
  const auto launch = [&](cudaStream_t s) {
    return testing::launch_trivial_kernel(out.as<float>(), static_cast<int>(n), s);
  };
  REQUIRE(measure_energy_run(
              launch, 0.2, idle.run_seconds, read, [&](double t) { return sensors->probe(t); }, {},
              stream, energy) == cudaSuccess);
  INFO(energy.unavailable);
  REQUIRE(energy.collected());
  CHECK(energy.readings.back().mJ > energy.readings.front().mJ);
  const auto busy = counter_interval(energy.readings);
  INFO((std::holds_alternative<std::string>(busy) ? std::get<std::string>(busy) : ""));
  REQUIRE(std::holds_alternative<CounterInterval>(busy));
  const CounterInterval& run = std::get<CounterInterval>(busy);
  std::cout << "energy counter: resolution " << run.cadence.resolution_mJ << " mJ (at rest "
            << rest.cadence.resolution_mJ << "), update period " << run.cadence.update_period_s
            << " s (at rest " << rest.cadence.update_period_s << "); idle " << rest.watts()
            << " W, busy " << run.watts() << " W over " << run.seconds << " s, " << energy.launches
            << " launches; NVML power reading at the end " << energy.probes.back().power_W
            << " W\n";
  CHECK(run.watts() > rest.watts());
}
