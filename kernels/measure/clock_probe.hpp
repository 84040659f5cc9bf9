#pragma once

// Measures the SM clock over an interval of a stream, as nvbench's
// timestamps_kernel / gpu_frequency do: a probe kernel enqueued before the
// timed work and one enqueued after it each read, on every SM they land on,
// the SM's cycle counter (clock64) and the GPU's nanosecond timer
// (%globaltimer). Cycles over nanoseconds on the same SM give the clock:
// MHz = cycles / ns * 1000.
//
// %globaltimer may tick as coarsely as 1 us, which over a 10 us launch would
// be a 10% error; each probe therefore waits for the timer's next tick before
// reading both counters, so both ends sit on a tick edge. The wait (at most
// one tick) lies outside the events that time the launch.

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {

// One probe block's reading. Plain data shared with the device.
struct ClockStamp {
  std::uint32_t generation;  // which start()/stop() pair wrote it
  std::uint32_t sm;          // %smid
  std::uint64_t global_ns;   // %globaltimer
  std::int64_t cycles;       // clock64()
};

class ClockProbe {
 public:
  // `device` must be current whenever start() and stop() are called.
  explicit ClockProbe(int device);

  // Enqueue the probe kernels on `stream`, before and after the interval.
  cudaError_t start(cudaStream_t stream);
  cudaError_t stop(cudaStream_t stream);

  // After the stream has synchronized past stop(): the median over SMs of
  // cycles / ns * 1000 between the two probes. 0 when it cannot be measured
  // (no SM ran a block of both probes, or no timer tick between them).
  double MHz() const;

 private:
  MappedHostBuffer stamps_;  // [0, blocks): start probe; [blocks, 2 blocks): stop probe
  int blocks_ = 0;
  std::uint32_t generation_ = 0;
};

// Runs a kernel that keeps every SM busy for about `busy_ms` between the two
// probes, synchronizes `stream`, and stores the measured clock in `MHz`.
cudaError_t measure_sm_clock(cudaStream_t stream, double busy_ms, double& MHz);

}  // namespace cfr::measure
