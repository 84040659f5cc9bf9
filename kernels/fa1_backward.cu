// FA1 backward on CUDA cores (fp32 math whatever the I/O dtype), in three
// passes whose loop structure docs/model.md's fa1_backward traffic model is
// derived from:
//   (a) D[i] = rowsum(dO_i * O_i): reads O and dO once, writes D (workspace);
//   (b) one CTA per K/V block of Bc rows: loads K and V once, loops over the
//       Q blocks of Br rows that see it (causal: those whose last row reaches
//       the block's first row), each time loading Q, dO, L and D, recomputing
//       P = exp(scale Q K^T - L) and accumulating dV += P^T dO and
//       dK += scale dS^T Q with dS = P * (dO V^T - D); writes dK, dV once;
//   (c) one CTA per Q block of Br rows: loads Q, dO, L, D once, loops over the
//       K/V blocks it needs, accumulating dQ += scale dS K; writes dQ once.
// No atomics: every output row is owned by one CTA, so results are
// deterministic. Br x Bc, the warps, the CTAs per SM and the launch order
// of passes (b) and (c) come from fa1_backward_kernel
// (roofline/model/kernel_catalog.hpp).

#include <cmath>

#include "kernels/attention_launchers.hpp"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/simt_tiles.cuh"
#include "kernels/softmax_constants.hpp"

namespace cfr::kernels {
namespace {

constexpr int row_dot_threads = 256;

template <int head_dim>
struct BackwardTraits {
  static constexpr KernelConfig config = arch_independent_config<fa1_backward_kernel, head_dim>();
  static constexpr TileShape tile = config.tile;
  static constexpr int br = tile.br;
  static constexpr int bc = tile.bc;
  static constexpr GridOrder kv_pass_order = fa1_backward_kernel.launches[0].order;
  static constexpr GridOrder q_pass_order = fa1_backward_kernel.launches[1].order;
  // Pass (b): a CTA owns Bc K/V rows and meets Br Q rows per step.
  using KvLayout = SimtLayout<bc, br, head_dim>;
  // Pass (c): a CTA owns Br Q rows and meets Bc K/V rows per step.
  using QLayout = SimtLayout<br, bc, head_dim>;
  static constexpr int ld = KvLayout::ld;
  static constexpr int ld_transposed = br + 4;  // P^T, then dS^T: [Bc][Br]
  static constexpr int ld_ds = bc + 4;          // dS: [Br][Bc]
  // fp32 K, V, Q, dO tiles, one score tile, L and D of Br rows. Above 48 KB
  // (87.5 KB for d = 64): the launcher opts in to dynamic shared memory; the
  // largest stays under the 99 KB per block of sm_86.
  static constexpr std::size_t kv_pass_smem_bytes =
      sizeof(float) * ((2 * bc + 2 * br) * ld + bc * ld_transposed + 2 * br);
  static constexpr std::size_t q_pass_smem_bytes =
      sizeof(float) * ((2 * bc + 2 * br) * ld + br * ld_ds + 2 * br);

  static_assert(tile.tiled(), "fa1_bwd has no tile for this head dim");
  static_assert(KvLayout::threads == config.threads() && QLayout::threads == config.threads(),
                "the catalog's warps differ from the layouts'");
  static_assert(config.stages == 1, "the catalog's stages differ from this kernel's one tile");
  static_assert(kv_pass_smem_bytes <= 99 * 1024 && q_pass_smem_bytes <= 99 * 1024);
};

// (a) D[row] = sum_n dO[row][n] * O[row][n]; `lanes` lanes per row, each
// with one 16-byte chunk of both.
template <typename T, int head_dim>
__global__ void __launch_bounds__(row_dot_threads)
    fa1_backward_row_dot(const T* __restrict__ o, const T* __restrict__ d_o,
                         float* __restrict__ d_rows, std::int64_t rows) {
  constexpr int per_chunk = elements_per_16_bytes<T>;
  constexpr int lanes = head_dim / per_chunk;
  static_assert(lanes <= 32 && 32 % lanes == 0);
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * row_dot_threads + threadIdx.x;
  const std::int64_t row = thread / lanes;
  const int col = static_cast<int>(thread % lanes) * per_chunk;
  float sum = 0.f;
  if (row < rows) {
    const std::int64_t offset = row * head_dim + col;
    float o_values[per_chunk];
    float do_values[per_chunk];
    unpack_16_bytes<T>(__ldg(reinterpret_cast<const uint4*>(o + offset)), o_values);
    unpack_16_bytes<T>(__ldg(reinterpret_cast<const uint4*>(d_o + offset)), do_values);
#pragma unroll
    for (int e = 0; e < per_chunk; ++e) sum = fmaf(o_values[e], do_values[e], sum);
  }
#pragma unroll
  for (int offset = lanes / 2; offset > 0; offset /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  }
  if (row < rows && col == 0) d_rows[row] = sum;
}

// Where element (i, j) of a thread's score tile sits: the global query row
// and key column, and the index into the block's L and D.
struct ScoreIndex {
  int row;
  int col;
  int stat;
};

// s (recomputed scores Q K^T) -> P = exp2(scale * log2(e) * s - L * log2(e));
// 0 past seq_len and above the diagonal. `index_of(i, j)` gives a ScoreIndex.
template <int rows, int cols, typename IndexOf>
__device__ __forceinline__ void to_probabilities(float (&s)[rows][cols],
                                                 const float* __restrict__ lse_log2,
                                                 float scale_log2, bool masked, int seq_len,
                                                 bool causal, IndexOf index_of) {
#pragma unroll
  for (int i = 0; i < rows; ++i) {
#pragma unroll
    for (int j = 0; j < cols; ++j) {
      const ScoreIndex at = index_of(i, j);
      const float p = exp2f(s[i][j] * scale_log2 - lse_log2[at.stat]);
      const bool outside = at.row >= seq_len || at.col >= seq_len || (causal && at.col > at.row);
      s[i][j] = masked && outside ? 0.f : p;
    }
  }
}

// dp (dO V^T) -> dS = P * (dP - D); p_of(i, j) gives P.
template <int rows, int cols, typename ProbabilityOf, typename IndexOf>
__device__ __forceinline__ void to_score_gradients(float (&dp)[rows][cols],
                                                   const float* __restrict__ d_rows,
                                                   ProbabilityOf p_of, IndexOf index_of) {
#pragma unroll
  for (int i = 0; i < rows; ++i) {
#pragma unroll
    for (int j = 0; j < cols; ++j) dp[i][j] = p_of(i, j) * (dp[i][j] - d_rows[index_of(i, j).stat]);
  }
}

// Writes acc * factor to rows [first_row + i * row_stride] below seq_len.
template <typename T, typename Layout>
__device__ __forceinline__ void store_rows(
    T* __restrict__ head,
    const float (&acc)[Layout::rows_per_thread][Layout::groups][Layout::vector], int first_row,
    int tx, int seq_len, float factor) {
#pragma unroll
  for (int i = 0; i < Layout::rows_per_thread; ++i) {
    const int row = first_row + i * Layout::row_groups;
    if (row >= seq_len) continue;
    T* out = head + static_cast<std::int64_t>(row) * Layout::head_dim + tx * Layout::vector;
#pragma unroll
    for (int g = 0; g < Layout::groups; ++g) {
      float values[Layout::vector];
#pragma unroll
      for (int e = 0; e < Layout::vector; ++e) values[e] = acc[i][g][e] * factor;
      store_converted<T, Layout::vector>(out + g * Layout::group_stride, values);
    }
  }
}

// (b) dK and dV of one K/V block. The catalog's 2 CTAs per SM: shared memory
// (87.5 KB at d = 64) allows no more, and it caps registers at 128 for 256
// threads.
template <typename T, int head_dim>
__global__ void __launch_bounds__(BackwardTraits<head_dim>::KvLayout::threads,
                                  BackwardTraits<head_dim>::config.ctas_per_sm)
    fa1_backward_dk_dv(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                       const T* __restrict__ d_o, const float* __restrict__ lse,
                       const float* __restrict__ d_rows, T* __restrict__ d_k, T* __restrict__ d_v,
                       int seq_len, bool causal, float scale, float scale_log2) {
  using Traits = BackwardTraits<head_dim>;
  using L = typename Traits::KvLayout;
  constexpr int br = Traits::br;
  constexpr int bc = Traits::bc;
  constexpr int ld = Traits::ld;
  constexpr int rows = L::rows_per_thread;  // K/V rows per thread
  constexpr int cols = L::cols_per_thread;  // Q rows per thread

  extern __shared__ float4 shared_words[];
  float* k_s = reinterpret_cast<float*>(shared_words);
  float* v_s = k_s + bc * ld;
  float* q_s = v_s + bc * ld;
  float* do_s = q_s + br * ld;
  float* transposed_s = do_s + br * ld;  // P^T, then dS^T
  float* lse_s = transposed_s + bc * Traits::ld_transposed;
  float* d_s = lse_s + br;

  const int tx = static_cast<int>(threadIdx.x) % L::lanes_per_row;
  const int ty = static_cast<int>(threadIdx.x) / L::lanes_per_row;
  const GridPosition position = grid_position<Traits::kv_pass_order, GridAxis::kv_blocks>();
  const int k0 = position.block * bc;
  const std::int64_t head = position.head;
  const std::int64_t head_offset = head * seq_len * head_dim;
  const std::int64_t row_offset = head * seq_len;

  load_tile_pair_fp32<T, bc, head_dim, ld, L::threads>(k_s, k + head_offset, v_s, v + head_offset,
                                                       k0, seq_len);

  float dk[rows][L::groups][L::vector] = {};
  float dv[rows][L::groups][L::vector] = {};

  // Causal: the Q blocks whose last row reaches this block's first key.
  const int first_q_block = causal ? k0 / br : 0;
  const int q_blocks = (seq_len + br - 1) / br;
  for (int q_block = first_q_block; q_block < q_blocks; ++q_block) {
    const int q0 = q_block * br;
    load_tile_pair_fp32<T, br, head_dim, ld, L::threads>(q_s, q + head_offset, do_s,
                                                         d_o + head_offset, q0, seq_len);
    load_row_values<br, L::threads>(lse_s, lse + row_offset, q0, seq_len, log2_e);
    load_row_values<br, L::threads>(d_s, d_rows + row_offset, q0, seq_len, 1.f);
    __syncthreads();

    // s[i][j] = K[c_i] . Q[r_j] and dp[i][j] = V[c_i] . dO[r_j], for the
    // thread's K rows c_i = k0 + ty + i * row_groups and Q rows r_j = q0 + tx + 16 j.
    const auto index_of = [&](int i, int j) {
      const int stat = tx + j * L::lanes_per_row;
      return ScoreIndex{q0 + stat, k0 + ty + i * L::row_groups, stat};
    };
    float* own_rows = transposed_s + ty * Traits::ld_transposed;
    const auto own = [&](int i, int j) -> float& {
      return own_rows[i * L::row_groups * Traits::ld_transposed + tx + j * L::lanes_per_row];
    };
    const bool masked = q0 + br > seq_len || k0 + bc > seq_len || (causal && k0 + bc - 1 > q0);
    {
      float s[rows][cols];
      tile_scores<rows, cols, head_dim, L::row_groups * ld, L::lanes_per_row * ld>(s, k_s + ty * ld,
                                                                                   q_s + tx * ld);
      to_probabilities(s, lse_s, scale_log2, masked, seq_len, causal, index_of);
      // P^T goes to shared memory now rather than staying in registers while
      // dP is computed: that keeps d = 64 within 128 registers without spills.
#pragma unroll
      for (int i = 0; i < rows; ++i) {
#pragma unroll
        for (int j = 0; j < cols; ++j) own(i, j) = s[i][j];
      }
    }
    float dp[rows][cols];
    tile_scores<rows, cols, head_dim, L::row_groups * ld, L::lanes_per_row * ld>(dp, v_s + ty * ld,
                                                                                 do_s + tx * ld);
    to_score_gradients(dp, d_s, own, index_of);  // each thread reads back only its own P
    __syncthreads();
    tile_accumulate<rows, L::groups, L::vector, br, L::row_groups * Traits::ld_transposed, ld,
                    L::group_stride>(dv, own_rows, do_s + tx * L::vector);
    __syncthreads();  // every thread is done with P^T before dS^T replaces it
#pragma unroll
    for (int i = 0; i < rows; ++i) {
#pragma unroll
      for (int j = 0; j < cols; ++j) own(i, j) = dp[i][j];
    }
    __syncthreads();
    tile_accumulate<rows, L::groups, L::vector, br, L::row_groups * Traits::ld_transposed, ld,
                    L::group_stride>(dk, own_rows, q_s + tx * L::vector);
    __syncthreads();  // Q, dO, L, D and dS^T are overwritten by the next block
  }

  store_rows<T, L>(d_k + head_offset, dk, k0 + ty, tx, seq_len, scale);
  store_rows<T, L>(d_v + head_offset, dv, k0 + ty, tx, seq_len, 1.f);
}

// (c) dQ of one Q block.
template <typename T, int head_dim>
__global__ void __launch_bounds__(BackwardTraits<head_dim>::QLayout::threads,
                                  BackwardTraits<head_dim>::config.ctas_per_sm)
    fa1_backward_dq(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                    const T* __restrict__ d_o, const float* __restrict__ lse,
                    const float* __restrict__ d_rows, T* __restrict__ d_q, int seq_len, bool causal,
                    float scale, float scale_log2) {
  using Traits = BackwardTraits<head_dim>;
  using L = typename Traits::QLayout;
  constexpr int br = Traits::br;
  constexpr int bc = Traits::bc;
  constexpr int ld = Traits::ld;
  constexpr int rows = L::rows_per_thread;  // Q rows per thread
  constexpr int cols = L::cols_per_thread;  // K/V rows per thread

  extern __shared__ float4 shared_words[];
  float* q_s = reinterpret_cast<float*>(shared_words);
  float* do_s = q_s + br * ld;
  float* k_s = do_s + br * ld;
  float* v_s = k_s + bc * ld;
  float* ds_s = v_s + bc * ld;
  float* lse_s = ds_s + br * Traits::ld_ds;
  float* d_s = lse_s + br;

  const int tx = static_cast<int>(threadIdx.x) % L::lanes_per_row;
  const int ty = static_cast<int>(threadIdx.x) / L::lanes_per_row;
  const GridPosition position = grid_position<Traits::q_pass_order, GridAxis::q_blocks>();
  const int q0 = position.block * br;
  const std::int64_t head = position.head;
  const std::int64_t head_offset = head * seq_len * head_dim;
  const std::int64_t row_offset = head * seq_len;

  load_tile_pair_fp32<T, br, head_dim, ld, L::threads>(q_s, q + head_offset, do_s,
                                                       d_o + head_offset, q0, seq_len);
  load_row_values<br, L::threads>(lse_s, lse + row_offset, q0, seq_len, log2_e);
  load_row_values<br, L::threads>(d_s, d_rows + row_offset, q0, seq_len, 1.f);

  float dq[rows][L::groups][L::vector] = {};

  // Causal: the K/V blocks at or left of the diagonal of the block's last row.
  const int last_row = min(seq_len, q0 + br) - 1;
  const int kv_blocks = causal ? last_row / bc + 1 : (seq_len + bc - 1) / bc;
  for (int kv_block = 0; kv_block < kv_blocks; ++kv_block) {
    const int c0 = kv_block * bc;
    load_tile_pair_fp32<T, bc, head_dim, ld, L::threads>(k_s, k + head_offset, v_s, v + head_offset,
                                                         c0, seq_len);
    __syncthreads();

    // s[i][j] = Q[r_i] . K[c_j] and dp[i][j] = dO[r_i] . V[c_j], for the
    // thread's Q rows r_i = q0 + ty + i * row_groups and keys c_j = c0 + tx + 16 j.
    float s[rows][cols];
    float dp[rows][cols];
    tile_scores<rows, cols, head_dim, L::row_groups * ld, L::lanes_per_row * ld>(s, q_s + ty * ld,
                                                                                 k_s + tx * ld);
    tile_scores<rows, cols, head_dim, L::row_groups * ld, L::lanes_per_row * ld>(dp, do_s + ty * ld,
                                                                                 v_s + tx * ld);
    const bool masked = q0 + br > seq_len || c0 + bc > seq_len || (causal && c0 + bc - 1 > q0);
    const auto index_of = [&](int i, int j) {
      const int stat = ty + i * L::row_groups;
      return ScoreIndex{q0 + stat, c0 + tx + j * L::lanes_per_row, stat};
    };
    to_probabilities(s, lse_s, scale_log2, masked, seq_len, causal, index_of);
    to_score_gradients(
        dp, d_s, [&](int i, int j) { return s[i][j]; }, index_of);

    float* own_rows = ds_s + ty * Traits::ld_ds;
#pragma unroll
    for (int i = 0; i < rows; ++i) {
#pragma unroll
      for (int j = 0; j < cols; ++j) {
        own_rows[i * L::row_groups * Traits::ld_ds + tx + j * L::lanes_per_row] = dp[i][j];
      }
    }
    __syncthreads();
    tile_accumulate<rows, L::groups, L::vector, bc, L::row_groups * Traits::ld_ds, ld,
                    L::group_stride>(dq, own_rows, k_s + tx * L::vector);
    __syncthreads();  // K, V and dS are overwritten by the next block
  }

  store_rows<T, L>(d_q + head_offset, dq, q0 + ty, tx, seq_len, scale);
}

// D alone, at the start of the workspace: no alignment padding needed.
std::size_t fa1_backward_workspace_bytes(const AttentionShape& shape) {
  if (!has_positive_dimensions(shape)) return 0;
  return heads_total(shape) * static_cast<std::size_t>(shape.seq_len) * sizeof(float);
}

template <typename T, int head_dim>
cudaError_t launch_backward(const AttentionShape& shape, const BackwardBuffers& io,
                            const LaunchContext& context) {
  using Traits = BackwardTraits<head_dim>;
  if (context.workspace == nullptr ||
      context.workspace_bytes < fa1_backward_workspace_bytes(shape)) {
    return cudaErrorInvalidValue;
  }
  auto* d_rows = static_cast<float*>(context.workspace);
  const auto* q = static_cast<const T*>(io.q);
  const auto* k = static_cast<const T*>(io.k);
  const auto* v = static_cast<const T*>(io.v);
  const auto* d_o = static_cast<const T*>(io.d_o);
  const float scale = softmax_scale_of(shape);
  const float scale_log2 = softmax_scale_log2_of(shape);
  const int n = shape.seq_len;

  const auto rows = static_cast<std::int64_t>(heads_total(shape)) * n;
  constexpr int lanes = head_dim / elements_per_16_bytes<T>;
  const auto row_dot_blocks =
      static_cast<unsigned>((rows * lanes + row_dot_threads - 1) / row_dot_threads);
  CFR_CUDA_CHECK_NOEXCEPT(launch_kernel(fa1_backward_row_dot<T, head_dim>, dim3(row_dot_blocks),
                                        row_dot_threads, 0, context.stream,
                                        static_cast<const T*>(io.o), d_o, d_rows, rows));

  CFR_CUDA_CHECK_NOEXCEPT(
      launch_tiled(fa1_backward_dk_dv<T, head_dim>, Traits::kv_pass_order, shape, Traits::tile,
                   Traits::KvLayout::threads, Traits::kv_pass_smem_bytes, context.stream, q, k, v,
                   d_o, io.lse, d_rows, static_cast<T*>(io.d_k), static_cast<T*>(io.d_v), n,
                   shape.causal, scale, scale_log2));

  return launch_tiled(fa1_backward_dq<T, head_dim>, Traits::q_pass_order, shape, Traits::tile,
                      Traits::QLayout::threads, Traits::q_pass_smem_bytes, context.stream, q, k, v,
                      d_o, io.lse, d_rows, static_cast<T*>(io.d_q), n, shape.causal, scale,
                      scale_log2);
}

cudaError_t launch_fa1_backward(const AttentionShape& shape, const BackwardBuffers& io,
                                const LaunchContext& context) {
  if (!backward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa1_backward_kernel>(shape, [&]<typename T, int head_dim>() {
    return launch_backward<T, head_dim>(shape, io, context);
  });
}

}  // namespace

const BackwardKernel fa1_bwd_launcher{fa1_backward_workspace_bytes, launch_fa1_backward};

}  // namespace cfr::kernels
