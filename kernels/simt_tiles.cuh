#pragma once

// Building blocks of the fp32 SIMT kernels (fa1_scalar and fa1_bwd): the
// thread layout, global -> fp32 shared-memory tile loads, and the two
// register-tiled products every pass is made of:
//   scores:      s[i][j] = sum_k A[row_i][k] * B[col_j][k]   (Q K^T, dO V^T)
//   accumulate:  acc[i][n] += sum_c P[row_i][c] * V[c][n]    (P V, P^T dO, dS K)
// Shared-memory rows are padded by 4 floats: consecutive rows start 4 banks
// apart, so the float4 reads of 8 different rows in one quarter-warp hit 32
// different banks.

#include <cstdint>

#include "kernels/element_type.cuh"

namespace cfr::kernels {

// A CTA owns `owned_rows` rows (Q rows in the forward and dQ passes, K/V rows
// in the dK/dV pass) and meets `other_rows` rows per step. Half a warp (16
// lanes) shares each group of owned rows, so a row reduction is 4 shuffles;
// each thread owns 4 rows strided by row_groups, and of the other rows those
// strided by 16, so both the broadcast reads (owned rows, one address per
// half-warp) and the spread reads (other rows) are free of bank conflicts.
template <int owned_rows, int other_rows, int head_dim_>
struct SimtLayout {
  static constexpr int head_dim = head_dim_;
  static constexpr int lanes_per_row = 16;
  static constexpr int rows_per_thread = 4;
  static constexpr int row_groups = owned_rows / rows_per_thread;
  static constexpr int threads = row_groups * lanes_per_row;
  static constexpr int cols_per_thread = other_rows / lanes_per_row;
  // Output columns per thread: `vector` consecutive ones, `groups` times.
  static constexpr int vector = head_dim / lanes_per_row < 4 ? head_dim / lanes_per_row : 4;
  static constexpr int groups = head_dim / (lanes_per_row * vector);
  static constexpr int group_stride = lanes_per_row * vector;
  static constexpr int ld = head_dim + 4;  // floats per [.., head_dim] row in shared memory

  static_assert(owned_rows % rows_per_thread == 0 && other_rows % lanes_per_row == 0);
  static_assert(threads % 32 == 0 && threads <= 1024);
  static_assert(head_dim % (lanes_per_row * vector) == 0);
};

__device__ __forceinline__ void load_floats(const float* src, float (&out)[4]) {
  const float4 v = *reinterpret_cast<const float4*>(src);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
}
__device__ __forceinline__ void load_floats(const float* src, float (&out)[2]) {
  const float2 v = *reinterpret_cast<const float2*>(src);
  out[0] = v.x;
  out[1] = v.y;
}

// Rows [first_row, first_row + rows) of one head's [seq_len, head_dim]
// matrix of T, moved to fp32 shared memory in two steps so that the loads of
// several tiles are all in flight before the first one is converted:
//   fetch(): 16-byte global loads into registers; rows at or past seq_len
//            become zeros and are never read;
//   store(): conversion to fp32 (times `scale`) into rows of `ld` floats.
// Every row starts 16-byte aligned: head_dim * sizeof(T) is a multiple of 16
// and the launcher checks the base pointers.
template <typename T, int rows, int head_dim, int threads>
struct TileFetch {
  static constexpr int per_chunk = elements_per_16_bytes<T>;
  static constexpr int chunks_per_row = head_dim / per_chunk;
  static constexpr int chunks = rows * chunks_per_row;
  static constexpr int rounds = (chunks + threads - 1) / threads;
  static_assert(head_dim % per_chunk == 0);

  uint4 raw[rounds];

  __device__ __forceinline__ static bool in_tile(int chunk) {
    return chunks % threads == 0 || chunk < chunks;
  }

  __device__ __forceinline__ void fetch(const T* __restrict__ head, int first_row, int seq_len) {
#pragma unroll
    for (int i = 0; i < rounds; ++i) {
      const int chunk = static_cast<int>(threadIdx.x) + i * threads;
      const int row = chunk / chunks_per_row;
      const int col = (chunk % chunks_per_row) * per_chunk;
      raw[i] = make_uint4(0, 0, 0, 0);
      if (in_tile(chunk) && first_row + row < seq_len) {
        raw[i] = __ldg(reinterpret_cast<const uint4*>(
            head + static_cast<std::int64_t>(first_row + row) * head_dim + col));
      }
    }
  }

  template <int ld>
  __device__ __forceinline__ void store(float* __restrict__ dst, float scale = 1.f) const {
    static_assert(ld % 4 == 0);
#pragma unroll
    for (int i = 0; i < rounds; ++i) {
      const int chunk = static_cast<int>(threadIdx.x) + i * threads;
      if (!in_tile(chunk)) break;
      const int row = chunk / chunks_per_row;
      const int col = (chunk % chunks_per_row) * per_chunk;
      float values[per_chunk];
      unpack_16_bytes<T>(raw[i], values);
#pragma unroll
      for (int e = 0; e < per_chunk; e += 4) {
        *reinterpret_cast<float4*>(dst + row * ld + col + e) = make_float4(
            values[e] * scale, values[e + 1] * scale, values[e + 2] * scale, values[e + 3] * scale);
      }
    }
  }
};

// One tile, fetched and stored.
template <typename T, int rows, int head_dim, int ld, int threads>
__device__ __forceinline__ void load_tile_fp32(float* __restrict__ dst, const T* __restrict__ head,
                                               int first_row, int seq_len, float scale = 1.f) {
  TileFetch<T, rows, head_dim, threads> tile;
  tile.fetch(head, first_row, seq_len);
  tile.template store<ld>(dst, scale);
}

// Two tiles of the same rows (K and V, or Q and dO), both fetched before
// either is stored: one global-memory latency instead of two.
template <typename T, int rows, int head_dim, int ld, int threads>
__device__ __forceinline__ void load_tile_pair_fp32(float* __restrict__ dst_a,
                                                    const T* __restrict__ head_a,
                                                    float* __restrict__ dst_b,
                                                    const T* __restrict__ head_b, int first_row,
                                                    int seq_len) {
  TileFetch<T, rows, head_dim, threads> a;
  TileFetch<T, rows, head_dim, threads> b;
  a.fetch(head_a, first_row, seq_len);
  b.fetch(head_b, first_row, seq_len);
  a.template store<ld>(dst_a);
  b.template store<ld>(dst_b);
}

// Per-row fp32 values (L, D) of rows [first_row, first_row + count), times
// `scale`; zeros past seq_len.
template <int count, int threads>
__device__ __forceinline__ void load_row_values(float* __restrict__ dst,
                                                const float* __restrict__ src, int first_row,
                                                int seq_len, float scale) {
  for (int i = static_cast<int>(threadIdx.x); i < count; i += threads) {
    dst[i] = first_row + i < seq_len ? src[first_row + i] * scale : 0.f;
  }
}

// s[i][j] = sum_k a[i * a_stride + k] * b[j * b_stride + k] over k < depth.
// `a` and `b` point at the thread's first row of each operand.
// The depth loops below are unrolled by 2, not fully: each step already holds
// 4 x rows x cols independent FMAs per 8 shared loads, and full unrolling made
// fa1_backward.cu take 42 s instead of 15 s to compile per architecture.
template <int rows, int cols, int depth, int a_stride, int b_stride>
__device__ __forceinline__ void tile_scores(float (&s)[rows][cols], const float* __restrict__ a,
                                            const float* __restrict__ b) {
  static_assert(depth % 4 == 0);
#pragma unroll
  for (int i = 0; i < rows; ++i) {
#pragma unroll
    for (int j = 0; j < cols; ++j) s[i][j] = 0.f;
  }
#pragma unroll 2
  for (int k = 0; k < depth; k += 4) {
    float a_k[rows][4];
    float b_k[cols][4];
#pragma unroll
    for (int i = 0; i < rows; ++i) load_floats(a + i * a_stride + k, a_k[i]);
#pragma unroll
    for (int j = 0; j < cols; ++j) load_floats(b + j * b_stride + k, b_k[j]);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
      for (int i = 0; i < rows; ++i) {
#pragma unroll
        for (int j = 0; j < cols; ++j) s[i][j] = fmaf(a_k[i][kk], b_k[j][kk], s[i][j]);
      }
    }
  }
}

// acc[i][g][e] += sum_c p[i * p_stride + c] * v[c * v_ld + g * group_stride + e]
// over c < depth. `p` points at the thread's first row of P, `v` at its first
// output column of row 0.
template <int rows, int groups, int vector, int depth, int p_stride, int v_ld, int group_stride>
__device__ __forceinline__ void tile_accumulate(float (&acc)[rows][groups][vector],
                                                const float* __restrict__ p,
                                                const float* __restrict__ v) {
  static_assert(depth % 4 == 0);
#pragma unroll 2
  for (int c = 0; c < depth; c += 4) {
    float p_c[rows][4];
#pragma unroll
    for (int i = 0; i < rows; ++i) load_floats(p + i * p_stride + c, p_c[i]);
#pragma unroll
    for (int cc = 0; cc < 4; ++cc) {
#pragma unroll
      for (int g = 0; g < groups; ++g) {
        float v_c[vector];
        load_floats(v + (c + cc) * v_ld + g * group_stride, v_c);
#pragma unroll
        for (int i = 0; i < rows; ++i) {
#pragma unroll
          for (int e = 0; e < vector; ++e) acc[i][g][e] = fmaf(p_c[i][cc], v_c[e], acc[i][g][e]);
        }
      }
    }
  }
}

// Reductions over the 16 lanes that share a row (lane bits 0..3).
__device__ __forceinline__ float max_over_row_lanes(float x) {
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  }
  return x;
}
__device__ __forceinline__ float sum_over_row_lanes(float x) {
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace cfr::kernels
