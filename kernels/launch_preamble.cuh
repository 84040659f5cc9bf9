#pragma once

// What every kernel launch does around its kernel, and what a tiled kernel
// reads back from its grid:
//   launch_kernel: the dynamic shared memory opt-in (above 48 KB a launch
//     fails without it), the launch, and its error;
//   grid_of / launch_tiled: the grid of a catalog launch order, so the order
//     the traffic models read is the order the CTAs are launched in;
//   grid_position: which block and head a CTA owns, read from blockIdx
//     through the same order.

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_runtime_api.h>

#include "kernels/attention_api.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr::kernels {

template <typename... Params, typename... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, int threads, std::size_t smem_bytes,
                          cudaStream_t stream, Args&&... args) {
  if (smem_bytes > 0) {
    CFR_CUDA_CHECK_NOEXCEPT(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes)));
  }
  kernel<<<grid, threads, smem_bytes, stream>>>(std::forward<Args>(args)...);
  return cudaGetLastError();
}

// The planner skips a shape whose grid is longer than CUDA allows
// (grid_limit_reason), so every extent here fits its axis.
inline unsigned grid_extent(GridAxis axis, const AttentionShape& shape, TileShape tile) {
  return static_cast<unsigned>(blocks_along(axis, shape.batch, shape.heads, shape.seq_len, tile));
}

// blockIdx.x, .y and .z walk order[0], [1] and [2].
inline dim3 grid_of(const GridOrder& order, const AttentionShape& shape, TileShape tile) {
  return dim3(grid_extent(order[0], shape, tile), grid_extent(order[1], shape, tile),
              grid_extent(order[2], shape, tile));
}

template <typename... Params, typename... Args>
cudaError_t launch_tiled(void (*kernel)(Params...), const GridOrder& order,
                         const AttentionShape& shape, TileShape tile, int threads,
                         std::size_t smem_bytes, cudaStream_t stream, Args&&... args) {
  return launch_kernel(kernel, grid_of(order, shape, tile), threads, smem_bytes, stream,
                       std::forward<Args>(args)...);
}

constexpr int axis_position(const GridOrder& order, GridAxis axis) {
  for (int i = 0; i < 3; ++i) {
    if (order[i] == axis) return i;
  }
  return -1;
}

struct GridPosition {
  int block;          // the CTA's block along `block_axis`
  std::int64_t head;  // batch index * heads + head index: the CTA's [seq_len, head_dim] matrix
};

// Where the CTA sits in a grid built by grid_of(order, ...).
template <GridOrder order, GridAxis block_axis>
__device__ __forceinline__ GridPosition grid_position() {
  constexpr int block = axis_position(order, block_axis);
  constexpr int head = axis_position(order, GridAxis::heads);
  constexpr int batch = axis_position(order, GridAxis::batch);
  static_assert(block >= 0 && head >= 0 && batch >= 0,
                "the launch order lacks the block axis this kernel reads");
  const unsigned index[3] = {blockIdx.x, blockIdx.y, blockIdx.z};
  const unsigned extent[3] = {gridDim.x, gridDim.y, gridDim.z};
  return {static_cast<int>(index[block]),
          static_cast<std::int64_t>(index[batch]) * extent[head] + index[head]};
}

}  // namespace cfr::kernels
