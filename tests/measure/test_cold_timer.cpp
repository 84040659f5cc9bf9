// Pins the cold timer's contract (kernels/measure/cold_timer.hpp) on a
// trivial kernel: sample counts, stop reasons, clocks, error propagation.
#include <catch2/catch.hpp>

#include <algorithm>

#include "kernels/measure/cold_timer.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "tests/measure/trivial_kernels.hpp"

using namespace cfr::measure;

namespace {

constexpr int trivial_elements = 1 << 18;

// Copyable, as std::function requires: the buffer lives in the test case.
struct TrivialLaunch {
  float* out = nullptr;
  cudaError_t operator()(cudaStream_t stream) const {
    return testing::launch_trivial_kernel(out, trivial_elements, stream);
  }
};

}  // namespace

TEST_CASE("time_cold takes at least min_samples positive samples", "[cold_timer]") {
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch launch{out.as<float>()};
  TimingOptions options;
  options.min_samples = 10;
  options.max_seconds = 10;
  options.target_rel_stdev = 0.5;  // loose: the test pins counts, not noise
  options.throttle_threshold = 0;  // nor clocks: a launch this small may not raise them
  TimingResult result;
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  CHECK(result.warmup_runs == options.warmup_runs);
  CHECK(result.l2_flush);
  CHECK(result.l2_flush_mode == "read");
  REQUIRE(result.samples_ms.size() >= 10);
  CHECK(std::all_of(result.samples_ms.begin(), result.samples_ms.end(),
                    [](double ms) { return ms > 0 && ms < 100; }));
  CHECK(result.sm_clock_MHz_samples.size() == result.samples_ms.size());
  CHECK(result.stop_reason == "noise target met");
  CHECK(result.noise_target_met);
  CHECK(result.stream_blocked);
  CHECK(result.max_sm_clock_MHz > 0);
}

TEST_CASE("time_cold stops at the sample cap when the noise target cannot be met", "[cold_timer]") {
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch launch{out.as<float>()};
  TimingOptions options;
  options.min_samples = 5;
  options.max_samples = 20;
  options.target_rel_stdev = -1;  // never met
  options.max_seconds = 10;
  options.flush_l2 = false;
  options.throttle_threshold = 0;
  TimingResult result;
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  CHECK(result.samples_ms.size() == 20);
  CHECK(result.stop_reason == "sample cap");
  CHECK_FALSE(result.noise_target_met);
  CHECK_FALSE(result.l2_flush);
  CHECK(result.l2_flush_mode.empty());
}

TEST_CASE("time_cold stops at the time cap", "[cold_timer]") {
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch launch{out.as<float>()};
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_samples = 1000000;
  options.max_samples = 1000000;
  options.max_seconds = 0.2;
  options.throttle_threshold = 0;
  TimingResult result;
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  CHECK(result.stop_reason == "time cap");
  CHECK_FALSE(result.noise_target_met);
  CHECK_FALSE(result.samples_ms.empty());
}

TEST_CASE("time_cold reads a plausible SM clock for every kept sample", "[cold_timer][clock]") {
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch launch{out.as<float>()};
  TimingOptions options;
  options.min_samples = 20;
  options.max_seconds = 10;
  options.target_rel_stdev = 1;
  TimingResult result;
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  for (double MHz : result.sm_clock_MHz_samples) {
    CHECK(MHz > 100);
    CHECK(MHz < 3000);
  }
  CHECK(result.sm_clock_MHz > 100);
  CHECK(result.sm_clock_min_MHz <= result.sm_clock_MHz);
  // The probe divides cycles by nanoseconds: it cannot read far above the boost clock.
  CHECK(result.sm_clock_MHz < 1.1 * result.max_sm_clock_MHz);
  CHECK(result.throttled ==
        (result.throttled_discarded > 0 || result.sm_clock_MHz < 0.75 * result.max_sm_clock_MHz));
}

TEST_CASE("time_cold returns the launch's error", "[cold_timer][errors]") {
  CudaStream stream;
  TimingOptions options;
  TimingResult result;
  CHECK(time_cold([](cudaStream_t) { return cudaErrorInvalidValue; }, options, stream, result) ==
        cudaErrorInvalidValue);

  // A launch error the launch function leaves for cudaGetLastError: which code
  // the runtime picks for a bad configuration differs between CUDA versions,
  // so the expected one is read from a direct launch first.
  DeviceBuffer out(sizeof(float));
  REQUIRE(testing::launch_misconfigured_kernel(out.as<float>(), stream) == cudaSuccess);
  const cudaError_t launch_error = cudaGetLastError();
  REQUIRE(launch_error != cudaSuccess);
  options.warmup_runs = 0;
  CHECK(
      time_cold(
          [&](cudaStream_t s) { return testing::launch_misconfigured_kernel(out.as<float>(), s); },
          options, stream, result) == launch_error);
  CHECK(result.samples_ms.empty());
  // Nothing is left pending for the next caller.
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("time_cold survives a launch that waits on the host", "[cold_timer][blocker]") {
  // Such a launch deadlocks behind the stream blocker until the blocker's
  // timeout (5 s); the timer must then drop the blocker, not hang.
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch trivial{out.as<float>()};
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_samples = 3;
  options.target_rel_stdev = 1;
  options.max_seconds = 60;
  options.throttle_threshold = 0;
  TimingResult result;
  const auto launch = [&](cudaStream_t s) {
    CFR_CUDA_CHECK_NOEXCEPT(trivial(s));
    return cudaStreamSynchronize(s);
  };
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  CHECK_FALSE(result.stream_blocked);
  CHECK(result.samples_ms.size() >= 3);
}

TEST_CASE("time_cold keeps throttled samples rather than return none", "[cold_timer][clock]") {
  // A threshold of 10 x the max clock calls every sample throttled.
  CudaStream stream;
  DeviceBuffer out(trivial_elements * sizeof(float));
  const TrivialLaunch launch{out.as<float>()};
  TimingOptions options;
  options.warmup_runs = 1;
  options.min_samples = 5;
  options.max_seconds = 0.5;
  options.throttle_threshold = 10;
  TimingResult result;
  REQUIRE(time_cold(launch, options, stream, result) == cudaSuccess);
  CHECK(result.stop_reason == "time cap");
  CHECK(result.throttled);
  CHECK(result.kept_throttled_samples);
  CHECK(result.throttled_discarded == 0);
  CHECK_FALSE(result.samples_ms.empty());
  CHECK(result.sm_clock_MHz_samples.size() == result.samples_ms.size());
}
