// FA1 forward on CUDA cores. One CTA per (Q block of Br rows, head, batch)
// streams over the K/V blocks of Bc rows in order, keeping the online softmax
// state per row (running max m, running sum l) and rescaling its output
// accumulator when m grows. Q, K, V are converted to fp32 in shared memory;
// every multiply-add is an fp32 FFMA, whatever the I/O dtype. Br x Bc, the
// warps, the CTAs per SM and the launch order come from fa1_scalar_kernel
// (roofline/model/kernel_catalog.hpp), the same values the kv_reload traffic model
// reads.

#include <cmath>

#include "kernels/attention_launchers.hpp"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/simt_tiles.cuh"

namespace cfr::kernels {
namespace {

template <int head_dim>
struct ScalarForwardTraits {
  static constexpr KernelConfig config = arch_independent_config<fa1_scalar_kernel, head_dim>();
  static constexpr TileShape tile = config.tile;
  static constexpr GridOrder order = fa1_scalar_kernel.launches[0].order;
  using Layout = SimtLayout<tile.br, tile.bc, head_dim>;
  static constexpr int ld_p = tile.bc + 4;
  // fp32 Q, K, V tiles and P. Above 48 KB for d = 64 (69.6 KB): the launcher
  // opts in to dynamic shared memory.
  static constexpr std::size_t smem_bytes =
      sizeof(float) * ((tile.br + 2 * tile.bc) * Layout::ld + tile.br * ld_p);
  static_assert(tile.tiled(), "fa1_scalar has no tile for this head dim");
  static_assert(Layout::threads == config.threads(),
                "the catalog's warps differ from the layout's");
  static_assert(config.stages == 1, "the catalog's stages differ from this kernel's one K/V tile");
};

// Scores of keys past seq_len, or above the diagonal when causal, become -inf.
template <int rows, int cols, int row_stride, int col_stride>
__device__ __forceinline__ void mask_scores(float (&s)[rows][cols], int first_row, int first_col,
                                            int seq_len, bool causal) {
#pragma unroll
  for (int i = 0; i < rows; ++i) {
    const int row = first_row + i * row_stride;
#pragma unroll
    for (int j = 0; j < cols; ++j) {
      const int col = first_col + j * col_stride;
      if (col >= seq_len || (causal && col > row)) s[i][j] = -INFINITY;
    }
  }
}

// The catalog's CTAs per SM (2) are the __launch_bounds__ minimum: the
// catalog entry says why.
template <typename T, int head_dim>
__global__ void __launch_bounds__(ScalarForwardTraits<head_dim>::Layout::threads,
                                  ScalarForwardTraits<head_dim>::config.ctas_per_sm)
    fa1_scalar_forward(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                       T* __restrict__ o, float* __restrict__ lse, int seq_len, bool causal,
                       float scale_log2) {
  using Traits = ScalarForwardTraits<head_dim>;
  using L = typename Traits::Layout;
  constexpr int br = Traits::tile.br;
  constexpr int bc = Traits::tile.bc;
  constexpr int rows = L::rows_per_thread;
  constexpr int cols = L::cols_per_thread;

  extern __shared__ float4 shared_words[];
  float* q_s = reinterpret_cast<float*>(shared_words);
  float* k_s = q_s + br * L::ld;
  float* v_s = k_s + bc * L::ld;
  float* p_s = v_s + bc * L::ld;

  const int tx = static_cast<int>(threadIdx.x) % L::lanes_per_row;
  const int ty = static_cast<int>(threadIdx.x) / L::lanes_per_row;
  const GridPosition position = grid_position<Traits::order, GridAxis::q_blocks>();
  const int q0 = position.block * br;
  const std::int64_t head = position.head;
  const std::int64_t head_offset = head * seq_len * head_dim;

  // Q pre-multiplied by scale * log2(e): scores come out ready for exp2.
  load_tile_fp32<T, br, head_dim, L::ld, L::threads>(q_s, q + head_offset, q0, seq_len, scale_log2);

  OnlineSoftmaxRow softmax[rows];
  float acc[rows][L::groups][L::vector] = {};

  // Causal: the K/V blocks at or left of the diagonal of the block's last row.
  const int last_row = min(seq_len, q0 + br) - 1;
  const int kv_blocks = causal ? last_row / bc + 1 : (seq_len + bc - 1) / bc;
  for (int block = 0; block < kv_blocks; ++block) {
    const int c0 = block * bc;
    load_tile_pair_fp32<T, bc, head_dim, L::ld, L::threads>(k_s, k + head_offset, v_s,
                                                            v + head_offset, c0, seq_len);
    __syncthreads();

    float s[rows][cols];
    tile_scores<rows, cols, head_dim, L::row_groups * L::ld, L::lanes_per_row * L::ld>(
        s, q_s + ty * L::ld, k_s + tx * L::ld);
    // Only a block that reaches past seq_len or crosses the diagonal needs the mask.
    if (c0 + bc > seq_len || (causal && c0 + bc - 1 > q0)) {
      mask_scores<rows, cols, L::row_groups, L::lanes_per_row>(s, q0 + ty, c0 + tx, seq_len,
                                                               causal);
    }
    // Each lane keeps its share of l (all lanes of a row apply the same
    // rescale factors), reduced once at the end.
#pragma unroll
    for (int i = 0; i < rows; ++i) {
      const float rescale = softmax[i].step(s[i], max_over_row_lanes(max_of(s[i])));
#pragma unroll
      for (int g = 0; g < L::groups; ++g) {
#pragma unroll
        for (int e = 0; e < L::vector; ++e) acc[i][g][e] *= rescale;
      }
    }
#pragma unroll
    for (int i = 0; i < rows; ++i) {
#pragma unroll
      for (int j = 0; j < cols; ++j) {
        p_s[(ty + i * L::row_groups) * Traits::ld_p + tx + j * L::lanes_per_row] = s[i][j];
      }
    }
    __syncthreads();

    tile_accumulate<rows, L::groups, L::vector, bc, L::row_groups * Traits::ld_p, L::ld,
                    L::group_stride>(acc, p_s + ty * Traits::ld_p, v_s + tx * L::vector);
    __syncthreads();  // K, V and P are overwritten by the next block
  }

#pragma unroll
  for (int i = 0; i < rows; ++i) {
    const float total = sum_over_row_lanes(softmax[i].sum);
    const int row = q0 + ty + i * L::row_groups;
    if (row >= seq_len) continue;
    const float inverse = __fdividef(1.f, total);  // total >= 1: the row max contributes 1
    T* out = o + head_offset + static_cast<std::int64_t>(row) * head_dim + tx * L::vector;
#pragma unroll
    for (int g = 0; g < L::groups; ++g) {
      float values[L::vector];
#pragma unroll
      for (int e = 0; e < L::vector; ++e) values[e] = acc[i][g][e] * inverse;
      store_converted<T, L::vector>(out + g * L::group_stride, values);
    }
    if (tx == 0) lse[head * seq_len + row] = natural_lse(softmax[i].max, total);
  }
}

template <typename T, int head_dim>
cudaError_t launch_scalar_forward(const AttentionShape& shape, const ForwardBuffers& io,
                                  const LaunchContext& context) {
  using Traits = ScalarForwardTraits<head_dim>;
  return launch_tiled(fa1_scalar_forward<T, head_dim>, Traits::order, shape, Traits::tile,
                      Traits::Layout::threads, Traits::smem_bytes, context.stream,
                      static_cast<const T*>(io.q), static_cast<const T*>(io.k),
                      static_cast<const T*>(io.v), static_cast<T*>(io.o), io.lse, shape.seq_len,
                      shape.causal, softmax_scale_log2_of(shape));
}

cudaError_t launch_fa1_scalar(const AttentionShape& shape, const ForwardBuffers& io,
                              const LaunchContext& context) {
  if (!forward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa1_scalar_kernel>(shape, [&]<typename T, int head_dim>() {
    return launch_scalar_forward<T, head_dim>(shape, io, context);
  });
}

}  // namespace

const ForwardKernel fa1_scalar_launcher{no_workspace, launch_fa1_scalar};

}  // namespace cfr::kernels
