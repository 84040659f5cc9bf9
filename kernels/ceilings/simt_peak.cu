// SIMT peaks: fp32 FFMA and fp16 HFMA2 chains, all in registers. Each thread
// runs 8 independent chains x = x * a + b (a, b kernel arguments, so nothing
// folds at compile time); the iteration loop is unrolled so that loop
// bookkeeping takes a few percent of the issue slots, not a quarter.

#include <algorithm>
#include <string>

#include <cuda_fp16.h>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int fma_threads = 256;
constexpr int fma_chains = 8;
constexpr int fma_unroll = 16;  // iterations per loop trip: 128 FMAs per branch

__device__ __forceinline__ float fma_step(float x, float a, float b) {
  return fmaf(x, a, b);
}
__device__ __forceinline__ __half2 fma_step(__half2 x, __half2 a, __half2 b) {
  return __hfma2(x, a, b);
}
__device__ __forceinline__ float to_float(float x) {
  return x;
}
__device__ __forceinline__ float to_float(__half2 x) {
  return __low2float(x) + __high2float(x);
}
__device__ __forceinline__ float from_index(float, int i) {
  return 0.001f * static_cast<float>(i);
}
__device__ __forceinline__ __half2 from_index(__half2, int i) {
  return __floats2half2_rn(0.001f * static_cast<float>(i), -0.001f * static_cast<float>(i));
}

// `iterations` is rounded down to a multiple of fma_unroll by the caller.
template <typename T>
__global__ void __launch_bounds__(fma_threads)
    fma_chains_kernel(int iterations, T a, T b, float* sink, int write_sink) {
  T x[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) x[c] = from_index(T{}, static_cast<int>(threadIdx.x) + c);
  for (int it = 0; it < iterations; it += fma_unroll) {
#pragma unroll
    for (int u = 0; u < fma_unroll; ++u) {
#pragma unroll
      for (int c = 0; c < fma_chains; ++c) x[c] = fma_step(x[c], a, b);
    }
  }
  float total = 0;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) total += to_float(x[c]);
  if (write_sink != 0)
    sink[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = total;
}

template <typename T>
CeilingMeasurement measure_fma_peak(const measure::TimingOptions& options, int iterations,
                                    cudaStream_t stream, T a, T b, detail::FigureSpec spec,
                                    double flop_per_fma, const char* instruction,
                                    const measure::BoardEnergy* energy) {
  iterations = std::max(fma_unroll, iterations / fma_unroll * fma_unroll);
  const int blocks =
      detail::resident_blocks(reinterpret_cast<const void*>(fma_chains_kernel<T>), fma_threads);
  measure::DeviceBuffer sink(static_cast<std::size_t>(blocks) * fma_threads * sizeof(float));
  const double threads = static_cast<double>(blocks) * fma_threads;
  spec.unit = "TFLOP/s";
  spec.unit_scale = 1e12;
  spec.work_per_launch = threads * iterations * fma_chains * flop_per_fma;
  spec.method = std::string(instruction) + " chains in registers, " + std::to_string(fma_chains) +
                " independent chains x " + std::to_string(iterations) + " iterations per thread, " +
                std::to_string(blocks) + " blocks of " + std::to_string(fma_threads) +
                " threads, hot; counts " + std::to_string(static_cast<int>(flop_per_fma)) +
                " FLOP per instruction per thread";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        fma_chains_kernel<T><<<blocks, fma_threads, 0, s>>>(iterations, a, b, sink.as<float>(), 0);
        return cudaGetLastError();
      },
      detail::hot(options), stream, energy);
}

}  // namespace

CeilingMeasurement measure_fp32_fma_peak(const measure::TimingOptions& options, int iterations,
                                         cudaStream_t stream, const measure::BoardEnergy* energy) {
  detail::FigureSpec spec;
  spec.figure = "fp32_simt_fma";
  spec.compute_unit = ComputeUnit::fp32_simt;
  return measure_fma_peak<float>(options, iterations, stream, 0.999f, 0.001f, spec, 2.0, "FFMA",
                                 energy);
}

CeilingMeasurement measure_fp16_hfma2_peak(const measure::TimingOptions& options, int iterations,
                                           cudaStream_t stream,
                                           const measure::BoardEnergy* energy) {
  detail::FigureSpec spec;
  spec.figure = "fp16_simt_hfma2";
  spec.compute_unit = ComputeUnit::fp16_simt;
  return measure_fma_peak<__half2>(options, iterations, stream, __floats2half2_rn(0.999f, 0.999f),
                                   __floats2half2_rn(0.001f, 0.001f), spec, 4.0, "HFMA2", energy);
}

}  // namespace cfr::ceilings
