#pragma once

// Small launches the measure tests time (kept out of the Catch2 sources so
// that catch.hpp never goes through nvcc).

#include <cuda_runtime_api.h>

namespace cfr::measure::testing {

// out[i] = 2 * i + 1 for i < n: a launch of a few microseconds.
cudaError_t launch_trivial_kernel(float* out, int n, cudaStream_t stream);

// A launch configuration error (zero blocks): cudaGetLastError reports it.
cudaError_t launch_misconfigured_kernel(float* out, cudaStream_t stream);

}  // namespace cfr::measure::testing
