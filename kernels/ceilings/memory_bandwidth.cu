// DRAM and L2 bandwidth: one copy kernel, 16-byte accesses, grid-stride.
//
// Loads and stores use the .cg (cache-global) hint: they bypass L1, so the L2
// figure measures L2 and not an SM's L1 (a working set of L2 / 4 spread over
// the SMs would otherwise fit in their L1s). Stores of whole 32-byte sectors
// allocate in L2 without reading DRAM, so a copy moves read + written bytes.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/ceilings/random_fill.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int copy_threads = 256;

// Pass p copies a -> b when p is even, b -> a when odd. Every thread touches
// the same elements in every pass, so a pass reads only what the same thread
// wrote in the one before: no race between blocks, and the passes cannot be
// folded into one by the compiler.
__global__ void __launch_bounds__(copy_threads)
    copy_passes(uint4* a, uint4* b, std::size_t count, int passes) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int pass = 0; pass < passes; ++pass) {
    const uint4* src = (pass & 1) ? b : a;
    uint4* dst = (pass & 1) ? a : b;
    std::size_t i = first;
    // Four independent 16-byte loads in flight per thread before any store.
    for (; i + 3 * stride < count; i += 4 * stride) {
      const uint4 v0 = __ldcg(src + i);
      const uint4 v1 = __ldcg(src + i + stride);
      const uint4 v2 = __ldcg(src + i + 2 * stride);
      const uint4 v3 = __ldcg(src + i + 3 * stride);
      __stcg(dst + i, v0);
      __stcg(dst + i + stride, v1);
      __stcg(dst + i + 2 * stride, v2);
      __stcg(dst + i + 3 * stride, v3);
    }
    for (; i < count; i += stride) __stcg(dst + i, __ldcg(src + i));
  }
}

struct CopyBuffers {
  measure::DeviceBuffer a;
  measure::DeviceBuffer b;
  std::size_t count = 0;  // uint4 elements per buffer
};

CopyBuffers make_copy_buffers(std::size_t buffer_bytes, cudaStream_t stream) {
  CopyBuffers buffers;
  buffers.count = buffer_bytes / sizeof(uint4);
  if (buffers.count == 0) throw std::invalid_argument("copy buffers must hold at least 16 bytes");
  const std::size_t bytes = buffers.count * sizeof(uint4);
  buffers.a = measure::DeviceBuffer(bytes);
  buffers.b = measure::DeviceBuffer(bytes);
  CFR_CUDA_CHECK(detail::fill_random_words(buffers.a.data(), bytes, 1, stream));
  CFR_CUDA_CHECK(detail::fill_random_words(buffers.b.data(), bytes, 2, stream));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  return buffers;
}

}  // namespace

CeilingMeasurement measure_dram_bandwidth(const measure::TimingOptions& options,
                                          std::size_t buffer_bytes, cudaStream_t stream,
                                          const measure::BoardEnergy* energy) {
  CopyBuffers buffers = make_copy_buffers(buffer_bytes, stream);
  const int blocks =
      detail::resident_blocks(reinterpret_cast<const void*>(copy_passes), copy_threads);
  const double bytes = 2.0 * static_cast<double>(buffers.count * sizeof(uint4));

  detail::FigureSpec spec;
  spec.figure = "dram_bandwidth";
  spec.unit = "GB/s";
  spec.work_per_launch = bytes;
  spec.unit_scale = 1e9;
  spec.method = "copy kernel, 16-byte ld.global.cg/st.global.cg, grid-stride over " +
                std::to_string(blocks) + " blocks of " + std::to_string(copy_threads) +
                " threads, one pass between two " + detail::mib(bytes / 2) + " buffers, " +
                detail::l2_state(options) + "; counts bytes read + bytes written";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        copy_passes<<<blocks, copy_threads, 0, s>>>(buffers.a.as<uint4>(), buffers.b.as<uint4>(),
                                                    buffers.count, 1);
        return cudaGetLastError();
      },
      options, stream, energy);
}

CeilingMeasurement measure_dram_memcpy_bandwidth(const measure::TimingOptions& options,
                                                 std::size_t buffer_bytes, cudaStream_t stream,
                                                 const measure::BoardEnergy* energy) {
  CopyBuffers buffers = make_copy_buffers(buffer_bytes, stream);
  const std::size_t bytes = buffers.count * sizeof(uint4);

  detail::FigureSpec spec;
  spec.figure = "dram_bandwidth_memcpy";
  spec.unit = "GB/s";
  spec.work_per_launch = 2.0 * static_cast<double>(bytes);
  spec.unit_scale = 1e9;
  spec.method = "cudaMemcpyAsync device to device (what frameworks' tensor copies call), one " +
                detail::mib(static_cast<double>(bytes)) + " buffer, " + detail::l2_state(options) +
                "; counts bytes read + bytes written; a reference for the copy kernel, not a roof";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        return cudaMemcpyAsync(buffers.b.data(), buffers.a.data(), bytes, cudaMemcpyDeviceToDevice,
                               s);
      },
      options, stream, energy);
}

CeilingMeasurement measure_l2_bandwidth(const measure::TimingOptions& options,
                                        std::size_t buffer_bytes, int passes, cudaStream_t stream,
                                        const measure::BoardEnergy* energy) {
  if (passes < 1) throw std::invalid_argument("the L2 benchmark needs at least one pass");
  CopyBuffers buffers = make_copy_buffers(buffer_bytes, stream);
  const int blocks =
      detail::resident_blocks(reinterpret_cast<const void*>(copy_passes), copy_threads);
  const double pass_bytes = 2.0 * static_cast<double>(buffers.count * sizeof(uint4));

  detail::FigureSpec spec;
  spec.figure = "l2_bandwidth";
  spec.unit = "GB/s";
  spec.work_per_launch = pass_bytes * passes;
  spec.unit_scale = 1e9;
  spec.method = "copy kernel, 16-byte ld.global.cg/st.global.cg (L1 bypassed), " +
                std::to_string(passes) + " ping-pong passes per launch between two " +
                std::to_string(static_cast<long long>(pass_bytes / 2 / 1024)) +
                " KiB buffers (working set inside L2), hot; counts bytes read + bytes written";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        copy_passes<<<blocks, copy_threads, 0, s>>>(buffers.a.as<uint4>(), buffers.b.as<uint4>(),
                                                    buffers.count, passes);
        return cudaGetLastError();
      },
      detail::hot(options), stream, energy);
}

}  // namespace cfr::ceilings
