// Shared-memory bandwidth: every thread streams 16-byte ld.shared.v4 loads
// from a 32 KiB tile, consecutive lanes on consecutive 16-byte words (a warp
// reads 512 contiguous bytes: four wavefronts, no bank conflict), four
// independent loads in flight per step, their words folded by XOR so the
// loads cannot be dropped. What it bounds: a kernel's ldmatrix / ld.shared
// traffic (the shared-memory pipe of docs/model.md §8.1).

#include <cstdint>
#include <string>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int shared_threads = 256;
constexpr int shared_tile_words = 2048;  // uint4 words: 32 KiB
constexpr int loads_per_step = 4;

__device__ __forceinline__ uint4 load_shared(const uint4* address) {
  uint4 v;
  const auto shared = static_cast<std::uint32_t>(__cvta_generic_to_shared(address));
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(shared));
  return v;
}

__global__ void __launch_bounds__(shared_threads)
    shared_stream_kernel(int iterations, unsigned* sink, int write_sink) {
  __shared__ uint4 tile[shared_tile_words];
  for (int i = static_cast<int>(threadIdx.x); i < shared_tile_words; i += shared_threads) {
    const auto u = static_cast<unsigned>(i);
    tile[i] = make_uint4(u, u * 3u, u * 5u, u * 7u);
  }
  __syncthreads();
  uint4 folded = make_uint4(0, 0, 0, 0);
  int index = static_cast<int>(threadIdx.x);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < loads_per_step; ++k) {
      const uint4 v = load_shared(&tile[(index + k * shared_threads) % shared_tile_words]);
      folded.x ^= v.x;
      folded.y ^= v.y;
      folded.z ^= v.z;
      folded.w ^= v.w;
    }
    index = (index + loads_per_step * shared_threads) % shared_tile_words;
  }
  if (write_sink != 0) {
    sink[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] =
        folded.x ^ folded.y ^ folded.z ^ folded.w;
  }
}

}  // namespace

CeilingMeasurement measure_shared_memory_bandwidth(const measure::TimingOptions& options,
                                                   int iterations, cudaStream_t stream,
                                                   const measure::BoardEnergy* energy) {
  if (iterations < 1) {
    throw std::invalid_argument("the shared-memory stream needs at least one iteration");
  }
  const int blocks =
      detail::resident_blocks(reinterpret_cast<const void*>(shared_stream_kernel), shared_threads);
  measure::DeviceBuffer sink(static_cast<std::size_t>(blocks) * shared_threads * sizeof(unsigned));
  detail::FigureSpec spec;
  spec.figure = "shared_memory_bandwidth";
  spec.unit = "GB/s";
  spec.unit_scale = 1e9;
  spec.work_per_launch =
      static_cast<double>(blocks) * shared_threads * iterations * loads_per_step * sizeof(uint4);
  spec.method = "ld.shared.v4 streams over a 32 KiB tile per block, " +
                std::to_string(loads_per_step) + " independent 16-byte loads x " +
                std::to_string(iterations) + " steps per thread, " + std::to_string(blocks) +
                " blocks of " + std::to_string(shared_threads) +
                " threads, conflict-free, hot; counts bytes loaded";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        shared_stream_kernel<<<blocks, shared_threads, 0, s>>>(iterations, sink.as<unsigned>(), 0);
        return cudaGetLastError();
      },
      detail::hot(options), stream, energy);
}

}  // namespace cfr::ceilings
