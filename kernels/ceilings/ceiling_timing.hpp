#pragma once

// Shared by the ceiling benchmarks: time a launch with the cold timer and turn
// each sample into a rate. Internal to kernels/ceilings.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/ceilings/ceilings.hpp"

namespace cfr::ceilings::detail {

struct FigureSpec {
  std::string figure;
  std::string unit;            // "GB/s" or "TFLOP/s"
  double work_per_launch = 0;  // bytes or FLOP moved / done by one launch
  double unit_scale = 1;       // 1e9 for GB/s, 1e12 for TFLOP/s
  std::string method;
  std::optional<ComputeUnit> compute_unit;
};

// Times `launch` with `options`; with an `energy` board, then measures the
// board's energy over a run of it, back to back (work_per_launch the spec's).
// Throws measure::CudaError naming the figure when the timer returns an
// error, or measure_energy_run when the run does.
CeilingMeasurement time_figure(const FigureSpec& spec,
                               const std::function<cudaError_t(cudaStream_t)>& launch,
                               const measure::TimingOptions& options, cudaStream_t stream,
                               const measure::BoardEnergy* energy);

// options with the L2 flush off: compute and L2 figures are measured hot.
measure::TimingOptions hot(measure::TimingOptions options);

// Blocks of `threads` threads, each with `shared_bytes` of dynamic shared
// memory, that fit on the current device at once (occupancy x SM count), at
// least one.
int resident_blocks(const void* kernel, int threads, std::size_t shared_bytes = 0);

// "2048 MiB"
std::string mib(double bytes);

// How a figure's method sentence says the L2 was treated.
std::string l2_state(const measure::TimingOptions& options);

}  // namespace cfr::ceilings::detail
