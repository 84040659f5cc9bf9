#include "tests/measure/trivial_kernels.hpp"

namespace cfr::measure::testing {
namespace {

__global__ void write_index(float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = 2.f * static_cast<float>(i) + 1.f;
}

}  // namespace

cudaError_t launch_trivial_kernel(float* out, int n, cudaStream_t stream) {
  write_index<<<(n + 255) / 256, 256, 0, stream>>>(out, n);
  return cudaGetLastError();
}

cudaError_t launch_misconfigured_kernel(float* out, cudaStream_t stream) {
  // More threads per block than any GPU allows.
  write_index<<<1, 4096, 0, stream>>>(out, 1);
  return cudaSuccess;  // the error is left for the timer's own cudaGetLastError
}

}  // namespace cfr::measure::testing
