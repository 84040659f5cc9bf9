// FA1 forward on tensor cores through nvcuda::wmma (m16n16k16, fp32
// accumulate), fp16 and bf16. Same structure as fa1_scalar: one CTA per
// (Q block of Br rows, head, batch) streams over the K/V blocks of Bc rows in
// order with the online softmax. Each warp owns 16 query rows: S = Q K^T goes
// through fp32 shared memory, the softmax runs there in fp32, P is written
// back in the I/O dtype, and O += P V accumulates in fragments. K/V tiles are
// double-buffered with cp.async. Br x Bc, the warps, the stages, the CTAs
// per SM and the launch order come from fa1_wmma_kernel
// (roofline/model/kernel_catalog.hpp).

#include <mma.h>

#include <cmath>

#include "kernels/async_copy.cuh"
#include "kernels/attention_launchers.hpp"
#include "kernels/element_type.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/online_softmax.cuh"

namespace cfr::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int fragment_size = 16;  // m = n = k = 16
constexpr int warp_size = 32;

constexpr std::size_t align_128(std::size_t bytes) {
  return (bytes + 127) / 128 * 128;
}

template <typename T, int head_dim>
struct WmmaForwardTraits {
  static constexpr KernelConfig config = arch_independent_config<fa1_wmma_kernel, head_dim>();
  static constexpr TileShape tile = config.tile;
  static constexpr GridOrder order = fa1_wmma_kernel.launches[0].order;
  static constexpr int br = tile.br;
  static constexpr int bc = tile.bc;
  static constexpr int warps = br / fragment_size;  // each warp owns 16 query rows
  static constexpr int threads = warps * warp_size;
  // Row strides. +8 halves (16 bytes) puts consecutive rows 4 banks apart, so
  // the 8 rows a fragment load reads at once hit different banks; strides stay
  // multiples of 16 bytes as wmma requires.
  static constexpr int ld_qkv = head_dim + 8;  // elements of T
  static constexpr int ld_s = bc + 4;          // floats
  static constexpr int ld_p = bc + 8;          // elements of T
  static constexpr int ld_o = head_dim + 4;    // floats, the output staging
  static constexpr int lanes_per_row = 2;      // softmax: two lanes per score row
  // Declared to ptxas through __launch_bounds__; the catalog entry says why
  // each value.
  static constexpr int ctas_per_sm = config.ctas_per_sm;
  static constexpr int cols_per_lane = bc / lanes_per_row;

  // Shared memory, every region 128-byte aligned (wmma pointers need 32).
  static constexpr std::size_t q_bytes = align_128(sizeof(T) * br * ld_qkv);
  static constexpr std::size_t kv_tile_bytes = align_128(sizeof(T) * bc * ld_qkv);
  static constexpr std::size_t k_offset = q_bytes;                       // 2 stages
  static constexpr std::size_t v_offset = k_offset + 2 * kv_tile_bytes;  // 2 stages
  static constexpr std::size_t s_offset = v_offset + 2 * kv_tile_bytes;
  static constexpr std::size_t p_offset = s_offset + align_128(sizeof(float) * br * ld_s);
  // Per warp a 16x16 fp32 tile holding each row's rescale factor in every
  // column: loaded as an accumulator fragment, its elements line up with the
  // O fragments' elements whatever the (unspecified) fragment layout is.
  static constexpr std::size_t alpha_offset = p_offset + align_128(sizeof(T) * br * ld_p);
  static constexpr std::size_t smem_bytes =
      alpha_offset + sizeof(float) * warps * fragment_size * fragment_size;
  // After the last block, O is staged in fp32 over the Q, K, V and S regions.
  static constexpr std::size_t o_stage_bytes = sizeof(float) * br * ld_o;

  static_assert(tile.tiled(), "fa1_wmma has no tile for this head dim");
  static_assert(warps == config.warps, "the catalog's warps differ from one warp per 16 rows");
  static_assert(config.stages == 2, "the catalog's stages differ from this kernel's double buffer");
  static_assert(br % fragment_size == 0 && bc % fragment_size == 0 &&
                head_dim % fragment_size == 0);
  static_assert(cols_per_lane % 4 == 0);
  static_assert(o_stage_bytes <= alpha_offset, "O staging would overwrite the row factors");
};

template <typename T>
using MatrixA =
    wmma::fragment<wmma::matrix_a, fragment_size, fragment_size, fragment_size, T, wmma::row_major>;
template <typename T, typename Layout>
using MatrixB =
    wmma::fragment<wmma::matrix_b, fragment_size, fragment_size, fragment_size, T, Layout>;
using Accumulator =
    wmma::fragment<wmma::accumulator, fragment_size, fragment_size, fragment_size, float>;

template <typename T, int head_dim>
__global__ void __launch_bounds__(WmmaForwardTraits<T, head_dim>::threads,
                                  WmmaForwardTraits<T, head_dim>::ctas_per_sm)
    fa1_wmma_forward(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                     T* __restrict__ o, float* __restrict__ lse, int seq_len, bool causal,
                     float scale_log2) {
  using Traits = WmmaForwardTraits<T, head_dim>;
  constexpr int br = Traits::br;
  constexpr int bc = Traits::bc;
  constexpr int d_fragments = head_dim / fragment_size;
  constexpr int c_fragments = bc / fragment_size;

  extern __shared__ __align__(128) unsigned char smem[];
  T* q_s = reinterpret_cast<T*>(smem);
  T* k_s = reinterpret_cast<T*>(smem + Traits::k_offset);
  T* v_s = reinterpret_cast<T*>(smem + Traits::v_offset);
  float* s_s = reinterpret_cast<float*>(smem + Traits::s_offset);
  T* p_s = reinterpret_cast<T*>(smem + Traits::p_offset);
  float* alpha_s = reinterpret_cast<float*>(smem + Traits::alpha_offset);
  constexpr int kv_tile = static_cast<int>(Traits::kv_tile_bytes / sizeof(T));

  const int warp = static_cast<int>(threadIdx.x) / warp_size;
  const int lane = static_cast<int>(threadIdx.x) % warp_size;
  const GridPosition position = grid_position<Traits::order, GridAxis::q_blocks>();
  const int q0 = position.block * br;
  const std::int64_t head = position.head;
  const std::int64_t head_offset = head * seq_len * head_dim;
  const T* k_head = k + head_offset;
  const T* v_head = v + head_offset;

  // This warp's rows of S, P and its rescale tile; the softmax gives each
  // lane half of one score row.
  const int warp_row = q0 + warp * fragment_size;
  float* s_warp = s_s + warp * fragment_size * Traits::ld_s;
  T* p_warp = p_s + warp * fragment_size * Traits::ld_p;
  float* alpha_warp = alpha_s + warp * fragment_size * fragment_size;
  const int lane_row = lane / Traits::lanes_per_row;
  const int lane_col = (lane % Traits::lanes_per_row) * Traits::cols_per_lane;

  const int last_row = min(seq_len, q0 + br) - 1;
  const int kv_blocks = causal ? last_row / bc + 1 : (seq_len + bc - 1) / bc;

  copy_tile_async<T, br, head_dim, Traits::ld_qkv, Traits::threads>(q_s, q + head_offset, q0,
                                                                    seq_len);
  copy_tile_async<T, bc, head_dim, Traits::ld_qkv, Traits::threads>(k_s, k_head, 0, seq_len);
  copy_tile_async<T, bc, head_dim, Traits::ld_qkv, Traits::threads>(v_s, v_head, 0, seq_len);
  commit_async_copies();

  MatrixA<T> q_frag[d_fragments];
  Accumulator o_frag[d_fragments];
#pragma unroll
  for (int n = 0; n < d_fragments; ++n) wmma::fill_fragment(o_frag[n], 0.f);
  // lane_row's m (log2 units of the scaled scores) and this lane's share of l.
  OnlineSoftmaxRow softmax;

  for (int block = 0; block < kv_blocks; ++block) {
    const int stage = block % 2;
    if (block + 1 < kv_blocks) {
      const int next = (block + 1) * bc;
      copy_tile_async<T, bc, head_dim, Traits::ld_qkv, Traits::threads>(k_s + (1 - stage) * kv_tile,
                                                                        k_head, next, seq_len);
      copy_tile_async<T, bc, head_dim, Traits::ld_qkv, Traits::threads>(v_s + (1 - stage) * kv_tile,
                                                                        v_head, next, seq_len);
      commit_async_copies();
      wait_async_copies<1>();  // this block's tiles (and Q) have landed
    } else {
      wait_async_copies<0>();
    }
    __syncthreads();

    const int c0 = block * bc;
    const T* k_tile = k_s + stage * kv_tile;
    const T* v_tile = v_s + stage * kv_tile;
    // A warp whose rows all lie past seq_len, or (causal) above this block's
    // first key, has nothing to add; it still joins the barriers.
    const bool warp_active = warp_row < seq_len && !(causal && warp_row + 15 < c0);
    if (warp_active) {
      if (block == 0) {
#pragma unroll
        for (int kk = 0; kk < d_fragments; ++kk) {
          wmma::load_matrix_sync(q_frag[kk],
                                 q_s + warp * fragment_size * Traits::ld_qkv + kk * fragment_size,
                                 Traits::ld_qkv);
        }
      }
      // S = Q K^T: K stored [key][dim] row-major is K^T in column-major.
#pragma unroll
      for (int j = 0; j < c_fragments; ++j) {
        Accumulator s_frag;
        wmma::fill_fragment(s_frag, 0.f);
#pragma unroll
        for (int kk = 0; kk < d_fragments; ++kk) {
          MatrixB<T, wmma::col_major> k_frag;
          wmma::load_matrix_sync(k_frag,
                                 k_tile + j * fragment_size * Traits::ld_qkv + kk * fragment_size,
                                 Traits::ld_qkv);
          wmma::mma_sync(s_frag, q_frag[kk], k_frag, s_frag);
        }
        wmma::store_matrix_sync(s_warp + j * fragment_size, s_frag, Traits::ld_s,
                                wmma::mem_row_major);
      }
      __syncwarp();

      // Online softmax on this lane's half row, fp32, log2 domain.
      float x[Traits::cols_per_lane];
      const float* s_row = s_warp + lane_row * Traits::ld_s + lane_col;
#pragma unroll
      for (int c = 0; c < Traits::cols_per_lane; c += 4) {
        const float4 four = *reinterpret_cast<const float4*>(s_row + c);
        x[c] = four.x * scale_log2;
        x[c + 1] = four.y * scale_log2;
        x[c + 2] = four.z * scale_log2;
        x[c + 3] = four.w * scale_log2;
      }
      if (c0 + bc > seq_len || (causal && c0 + bc - 1 > warp_row)) {
        const int row = warp_row + lane_row;
#pragma unroll
        for (int c = 0; c < Traits::cols_per_lane; ++c) {
          const int col = c0 + lane_col + c;
          if (col >= seq_len || (causal && col > row)) x[c] = -INFINITY;
        }
      }
      const float block_max = max_of(x);
      const float rescale =
          softmax.step(x, fmaxf(block_max, __shfl_xor_sync(0xffffffffu, block_max, 1)));
      T* p_row = p_warp + lane_row * Traits::ld_p + lane_col;
#pragma unroll
      for (int c = 0; c < Traits::cols_per_lane; ++c) p_row[c] = from_float<T>(x[c]);
      // Each lane fills its half of the row's 16 rescale entries.
      constexpr int alpha_per_lane = fragment_size / Traits::lanes_per_row;
      float* alpha_row =
          alpha_warp + lane_row * fragment_size + (lane % Traits::lanes_per_row) * alpha_per_lane;
#pragma unroll
      for (int c = 0; c < alpha_per_lane; c += 4) {
        *reinterpret_cast<float4*>(alpha_row + c) = make_float4(rescale, rescale, rescale, rescale);
      }
      __syncwarp();

      // O = diag(rescale) O + P V.
      Accumulator alpha_frag;
      wmma::load_matrix_sync(alpha_frag, alpha_warp, fragment_size, wmma::mem_row_major);
      MatrixA<T> p_frag[c_fragments];
#pragma unroll
      for (int kk = 0; kk < c_fragments; ++kk) {
        wmma::load_matrix_sync(p_frag[kk], p_warp + kk * fragment_size, Traits::ld_p);
      }
#pragma unroll
      for (int n = 0; n < d_fragments; ++n) {
#pragma unroll
        for (int e = 0; e < o_frag[n].num_elements; ++e) o_frag[n].x[e] *= alpha_frag.x[e];
#pragma unroll
        for (int kk = 0; kk < c_fragments; ++kk) {
          MatrixB<T, wmma::row_major> v_frag;
          wmma::load_matrix_sync(v_frag,
                                 v_tile + kk * fragment_size * Traits::ld_qkv + n * fragment_size,
                                 Traits::ld_qkv);
          wmma::mma_sync(o_frag[n], p_frag[kk], v_frag, o_frag[n]);
        }
      }
    }
    __syncthreads();  // the next iteration's copies overwrite the other stage
  }

  // Stage O in fp32 (over Q/K/V/S, all free now), normalize by 1/l, convert.
  const float total = softmax.sum + __shfl_xor_sync(0xffffffffu, softmax.sum, 1);
  if (warp_row >= seq_len) return;
  float* o_stage = reinterpret_cast<float*>(smem) + warp * fragment_size * Traits::ld_o;
#pragma unroll
  for (int n = 0; n < d_fragments; ++n) {
    wmma::store_matrix_sync(o_stage + n * fragment_size, o_frag[n], Traits::ld_o,
                            wmma::mem_row_major);
  }
  float* inverse_sum = alpha_warp;  // the rescale tile is free now
  if (lane % Traits::lanes_per_row == 0) {
    inverse_sum[lane_row] = __fdividef(1.f, total);  // total >= 1: the row max contributes 1
    const int row = warp_row + lane_row;
    if (row < seq_len) lse[head * seq_len + row] = natural_lse(softmax.max, total);
  }
  __syncwarp();
  constexpr int per_chunk = elements_per_16_bytes<T>;
  constexpr int chunks_per_row = head_dim / per_chunk;
#pragma unroll
  for (int chunk = lane; chunk < fragment_size * chunks_per_row; chunk += warp_size) {
    const int r = chunk / chunks_per_row;
    const int col = (chunk % chunks_per_row) * per_chunk;
    const int row = warp_row + r;
    if (row >= seq_len) continue;
    float values[per_chunk];
#pragma unroll
    for (int e = 0; e < per_chunk; ++e) {
      values[e] = o_stage[r * Traits::ld_o + col + e] * inverse_sum[r];
    }
    store_converted<T, per_chunk>(o + head_offset + static_cast<std::int64_t>(row) * head_dim + col,
                                  values);
  }
}

template <typename T, int head_dim>
cudaError_t launch_wmma_forward(const AttentionShape& shape, const ForwardBuffers& io,
                                const LaunchContext& context) {
  using Traits = WmmaForwardTraits<T, head_dim>;
  return launch_tiled(fa1_wmma_forward<T, head_dim>, Traits::order, shape, Traits::tile,
                      Traits::threads, Traits::smem_bytes, context.stream,
                      static_cast<const T*>(io.q), static_cast<const T*>(io.k),
                      static_cast<const T*>(io.v), static_cast<T*>(io.o), io.lse, shape.seq_len,
                      shape.causal, softmax_scale_log2_of(shape));
}

cudaError_t launch_fa1_wmma(const AttentionShape& shape, const ForwardBuffers& io,
                            const LaunchContext& context) {
  if (!forward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa1_wmma_kernel>(shape, [&]<typename T, int head_dim>() {
    return launch_wmma_forward<T, head_dim>(shape, io, context);
  });
}

}  // namespace

const ForwardKernel fa1_wmma_launcher{no_workspace, launch_fa1_wmma};

}  // namespace cfr::kernels
