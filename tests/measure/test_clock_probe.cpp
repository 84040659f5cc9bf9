// Pins the SM clock probe (kernels/measure/clock_probe.hpp): over a 20 ms busy
// kernel it reads a clock between 100 and 3000 MHz (every CUDA GPU since
// Pascal boosts within that range) and not above the device's max clock.
#include <catch2/catch.hpp>

#include "kernels/measure/clock_probe.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"

using namespace cfr::measure;

TEST_CASE("measure_sm_clock reads a plausible clock", "[clock]") {
  CudaStream stream;
  double MHz = 0;
  REQUIRE(measure_sm_clock(stream, 20.0, MHz) == cudaSuccess);
  INFO("measured " << MHz << " MHz");
  CHECK(MHz > 100);
  CHECK(MHz < 3000);
  int device = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  const DeviceInfo info = query_device(device);
  if (info.clock_MHz > 0) CHECK(MHz < 1.1 * info.clock_MHz);
}

TEST_CASE("ClockProbe reads 0 when nothing ran between start and stop", "[clock]") {
  int device = 0;
  REQUIRE(cudaGetDevice(&device) == cudaSuccess);
  ClockProbe probe(device);
  CHECK(probe.MHz() == 0);  // never started
}
