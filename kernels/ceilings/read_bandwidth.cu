// DRAM read bandwidth: a read-only stream, counted in bytes read.
//
// Why a kernel of its own, and not the copy kernel without its stores: a copy
// counts reads and writes, and HBM turns its bus around between them, while a
// decoding step only reads (K and V). On the H200 fa2_decode and torch's cuDNN
// read K/V at 4.5-4.65 TB/s, above the copy kernel's 3.9, and a loop of 16-byte
// loads into registers (four in flight per thread, grid-stride) read only
// 4.41-4.51 TB/s in the same device calls (docs/perf-notes.md, fa2_decode): a
// figure below the kernel it should bound is no ceiling. So this kernel reads
// the way fa2_decode does, with nothing else in its loop. Each block streams
// its own contiguous run of the buffer in 16 KiB tiles through a ring of
// `read_stages` tiles in shared memory, filled by 16-byte cp.async.cg (L1
// bypassed, no registers held while the bytes are in flight; consecutive
// threads copy consecutive chunks, so a warp copies 512 contiguous bytes per
// instruction), and as many blocks run as fit on the GPU at once, each with an
// equal run. That keeps as many bytes in flight per SM as fa2_decode does or
// more: on the H200 three blocks with three tiles in flight each, 144 KiB,
// against fa2_decode's two blocks with up to two 32 KiB K/V stages each.
// Each thread folds the chunks it copied into a checksum and stores it, so the
// copies have a consumer; those 4 bytes a thread (1 KiB a block, under 0.01 %
// of the bytes read at the default size) are not counted.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/async_copy.cuh"
#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/ceilings/random_fill.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int read_threads = 256;
constexpr int chunks_per_thread = 4;  // 16-byte chunks each thread copies per tile
constexpr int tile_chunks = read_threads * chunks_per_thread;
constexpr std::size_t tile_bytes = tile_chunks * sizeof(uint4);  // 16 KiB
constexpr int read_stages = 4;  // tiles in the ring; read_stages - 1 in flight
constexpr std::size_t ring_bytes = read_stages * tile_bytes;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
__device__ __forceinline__ uint4* slot_of(uint4* ring, std::size_t tile) {
  return ring + (tile % read_stages) * tile_chunks;
}

__device__ __forceinline__ void copy_tile(uint4* ring, const uint4* data, std::size_t tile) {
  const uint4* src = data + tile * tile_chunks;
  uint4* dst = slot_of(ring, tile);
#pragma unroll
  for (int c = 0; c < chunks_per_thread; ++c) {
    const int chunk = c * read_threads + static_cast<int>(threadIdx.x);
    kernels::copy_16_bytes_async(dst + chunk, src + chunk, true);
  }
}

// The chunks this thread copied: only it reads them, so no barrier is needed.
__device__ __forceinline__ std::uint32_t fold_tile(uint4* ring, std::size_t tile) {
  const uint4* slot = slot_of(ring, tile);
  std::uint32_t sum = 0;
#pragma unroll
  for (int c = 0; c < chunks_per_thread; ++c) {
    const uint4 v = slot[c * read_threads + static_cast<int>(threadIdx.x)];
    sum ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return sum;
}
#endif

// Block b reads tiles [tiles * b / grid, tiles * (b + 1) / grid) in order,
// read_stages - 1 tiles ahead of the one it folds.
__global__ void __launch_bounds__(read_threads)
    read_tiles(const uint4* __restrict__ data, std::size_t tiles,
               std::uint32_t* __restrict__ sums) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ uint4 ring[];
  const std::size_t first = tiles * blockIdx.x / gridDim.x;
  const std::size_t last = tiles * (blockIdx.x + 1) / gridDim.x;
  for (int s = 0; s < read_stages - 1; ++s) {
    if (first + s < last) copy_tile(ring, data, first + s);
    kernels::commit_async_copies();  // empty groups too: one group per tile index
  }
  std::uint32_t sum = 0;
  for (std::size_t tile = first; tile < last; ++tile) {
    kernels::wait_async_copies<read_stages - 2>();  // this tile's group has landed
    sum ^= fold_tile(ring, tile);
    const std::size_t next = tile + read_stages - 1;  // into the slot folded one tile ago
    if (next < last) copy_tile(ring, data, next);
    kernels::commit_async_copies();
  }
  sums[static_cast<std::size_t>(blockIdx.x) * read_threads + threadIdx.x] = sum;
#else
  (void)data;
  (void)tiles;
  (void)sums;
  __trap();  // built for an architecture without cp.async (sm_80 or newer needed)
#endif
}

}  // namespace

CeilingMeasurement measure_dram_read_bandwidth(const measure::TimingOptions& options,
                                               std::size_t buffer_bytes, cudaStream_t stream,
                                               const measure::BoardEnergy* energy) {
  const std::size_t tiles = buffer_bytes / tile_bytes;
  if (tiles == 0) {
    throw std::invalid_argument("the read stream needs a buffer of at least one 16 KiB tile");
  }
  const std::size_t bytes = tiles * tile_bytes;
  measure::DeviceBuffer data(bytes);
  CFR_CUDA_CHECK(detail::fill_random_words(data.data(), bytes, 3, stream));
  const auto* kernel = reinterpret_cast<const void*>(read_tiles);
  CFR_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(ring_bytes)));
  const int blocks = static_cast<int>(
      std::min<std::size_t>(detail::resident_blocks(kernel, read_threads, ring_bytes), tiles));
  measure::DeviceBuffer sums(static_cast<std::size_t>(blocks) * read_threads *
                             sizeof(std::uint32_t));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));

  detail::FigureSpec spec;
  spec.figure = "dram_read_bandwidth";
  spec.unit = "GB/s";
  spec.work_per_launch = static_cast<double>(bytes);
  spec.unit_scale = 1e9;
  spec.method =
      "read-only stream: " + std::to_string(blocks) + " blocks of " + std::to_string(read_threads) +
      " threads, each reading its own contiguous run of one " +
      detail::mib(static_cast<double>(bytes)) + " buffer in " + std::to_string(tile_bytes / 1024) +
      " KiB tiles through a " + std::to_string(read_stages) +
      "-tile ring in shared memory (16-byte cp.async.cg, L1 bypassed; each thread folds "
      "its chunks into a checksum), " +
      detail::l2_state(options) + "; counts bytes read";
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        read_tiles<<<blocks, read_threads, ring_bytes, s>>>(data.as<uint4>(), tiles,
                                                            sums.as<std::uint32_t>());
        return cudaGetLastError();
      },
      options, stream, energy);
}

}  // namespace cfr::ceilings
