#pragma once

// The timer's own cost, as a row of `count` kernels that do nothing: timed by
// the cold timer as a row's launches are, and profiled by Nsight Compute as a
// row's are, what the events measure beyond ncu's SM cycles is what they add
// to any row of that many kernels (the events themselves, each launch's
// ramp, the gaps between launches). sweep --profile subtracts it
// (docs/model.md §8.2).

#include <cuda_runtime_api.h>

namespace cfr::measure {

// Enqueues `count` (>= 1) launches of an empty one-warp kernel on `stream`.
cudaError_t launch_empty_kernels(cudaStream_t stream, int count);

}  // namespace cfr::measure
