#pragma once

// The building blocks of the tiled references (tiled_reference_forward.cu,
// tiled_reference_backward.cu): fp32 tiles in shared memory and the fp32
// SIMT products over them, written for being checked by eye rather than for
// speed. Every CTA has 256 threads as a 16 x 16 grid (ty, tx); a thread owns
// the rows ty + 16a of a tile and the columns tx + 16b, so a row's values sit
// in the 16 lanes of one half-warp and reduce with four shuffles. Tiles keep
// a row stride of D + 1 floats (odd): the 16 rows a half-warp reads at one
// column fall in 16 different banks. Device code.

#include <cstddef>
#include <cstdint>
#include <limits>

#include <cuda_runtime_api.h>

#include "kernels/attention_api.hpp"
#include "kernels/element_type.cuh"
#include "kernels/kernel_dispatch.cuh"

namespace cfr::kernels::reference_tiles {

constexpr int threads = 256;
constexpr int side = 16;  // threads per row and per column of the thread grid

__device__ __forceinline__ int ty() {
  return static_cast<int>(threadIdx.x) / side;
}
__device__ __forceinline__ int tx() {
  return static_cast<int>(threadIdx.x) % side;
}

// The smallest padded head dim that holds `head_dim`: the tiled references
// are instantiated for 32, 64 and 128, and zero-fill the columns past the
// shape's own head dim (0 when the head dim is above 128).
constexpr int padded_head_dim(int head_dim) {
  return head_dim <= 32 ? 32 : head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 0;
}

// Calls body.template operator()<D>() for the padded head dim of `head_dim`.
template <typename Body>
cudaError_t with_padded_head_dim(int head_dim, Body&& body) {
  switch (padded_head_dim(head_dim)) {
    case 32: return body.template operator()<32>();
    case 64: return body.template operator()<64>();
    case 128: return body.template operator()<128>();
    default: return cudaErrorInvalidValue;
  }
}

// The CTAs of a pass over `count` owned rows in blocks of `own`, for each of
// `heads` heads, one grid axis; 0 when a grid cannot hold them.
inline unsigned pass_blocks(std::size_t heads, int count, int own, int& blocks_per_head) {
  blocks_per_head = (count + own - 1) / own;
  const std::size_t blocks = heads * static_cast<std::size_t>(blocks_per_head);
  return blocks > static_cast<std::size_t>(std::numeric_limits<int>::max())
             ? 0
             : static_cast<unsigned>(blocks);
}

// What every kernel of the tiled references reads of the shape.
struct ReferenceDims {
  int seq_len;
  int kv_len;
  int group;  // query heads per K/V head: query head h reads K/V head h / group
  int head_dim;
  bool causal;
  float scale;

  // kv_len - seq_len: with the bottom-right causal mask query i sees key j
  // when j <= i + shift.
  __device__ int shift() const { return kv_len - seq_len; }
  // How many keys query i sees.
  __device__ int keys_seen(int i) const { return causal ? min(kv_len, i + shift() + 1) : kv_len; }
};

inline ReferenceDims reference_dims(const AttentionShape& shape) {
  return {shape.seq_len,  shape.keys(), shape.heads / shape.key_heads(),
          shape.head_dim, shape.causal, softmax_scale_of(shape)};
}

// The rows a pass owns in each head: `count` listed rows, or every row when
// `rows` is null, in blocks of a CTA each.
struct RowList {
  const int* rows;
  int count;
  int blocks_per_head;
};

// The block of a RowList one CTA owns: blockIdx.x is head * blocks_per_head
// + block.
struct OwnedBlock {
  std::int64_t head;
  int first;  // its first entry of the list
  int valid;  // its entries, `own` but in a head's last block
  const int* rows;

  // The row index (in the head) of the block's entry r.
  __device__ int index(int r) const { return rows != nullptr ? rows[first + r] : first + r; }
};

template <int own>
__device__ OwnedBlock owned_block(const RowList& list) {
  const int first = static_cast<int>(blockIdx.x % list.blocks_per_head) * own;
  return {blockIdx.x / list.blocks_per_head, first, min(own, list.count - first), list.rows};
}

// A tile of `rows` rows of D columns, stride D + 1, in shared memory.
template <int D>
constexpr int tile_floats(int rows) {
  return rows * (D + 1);
}

// dst[r][c] = scale * src[row r][c]: row r is `rows[first + r]` when `rows`
// is given, else first + r, of a [.., head_dim] matrix starting at `src`.
// Rows from `valid` on and columns from head_dim on are zero.
template <typename T, int ROWS, int D>
__device__ void load_tile(float* dst, const T* src, const int* rows, int first, int valid,
                          int head_dim, float scale) {
  for (int e = static_cast<int>(threadIdx.x); e < ROWS * D; e += threads) {
    const int r = e / D;
    const int c = e % D;
    float value = 0.f;
    if (r < valid && c < head_dim) {
      const std::int64_t row = rows != nullptr ? rows[first + r] : first + r;
      value = to_float(src[row * head_dim + c]) * scale;
    }
    dst[r * (D + 1) + c] = value;
  }
}

// The same for a vector (LSE, D): dst[r] = src[row r], 0 from `valid` on.
__device__ inline void load_vector(float* dst, int count, const float* src, int first, int valid) {
  for (int r = static_cast<int>(threadIdx.x); r < count; r += threads) {
    dst[r] = r < valid ? src[first + r] : 0.f;
  }
}

// acc[a][b] += a_tile[ty + 16a] . b_tile[tx + 16b] over the D columns: one
// micro-tile of A B^T.
template <int A, int B, int D>
__device__ void add_row_dots(float (&acc)[A][B], const float* a_tile, const float* b_tile) {
  for (int k = 0; k < D; ++k) {
    float a[A];
    float b[B];
#pragma unroll
    for (int i = 0; i < A; ++i) a[i] = a_tile[(ty() + side * i) * (D + 1) + k];
#pragma unroll
    for (int j = 0; j < B; ++j) b[j] = b_tile[(tx() + side * j) * (D + 1) + k];
#pragma unroll
    for (int i = 0; i < A; ++i) {
#pragma unroll
      for (int j = 0; j < B; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
}

// acc[a][c] += sum_j w[ty + 16a][j] * m[j][tx + 16c], j < J: one micro-tile
// of W M with W [rows][J] (stride J + 1) and M [J][D] (stride D + 1).
template <int A, int C, int J, int D>
__device__ void add_weighted_rows(float (&acc)[A][C], const float* w, const float* m) {
  for (int j = 0; j < J; ++j) {
    float wv[A];
    float mv[C];
#pragma unroll
    for (int i = 0; i < A; ++i) wv[i] = w[(ty() + side * i) * (J + 1) + j];
#pragma unroll
    for (int c = 0; c < C; ++c) mv[c] = m[j * (D + 1) + tx() + side * c];
#pragma unroll
    for (int i = 0; i < A; ++i) {
#pragma unroll
      for (int c = 0; c < C; ++c) acc[i][c] = fmaf(wv[i], mv[c], acc[i][c]);
    }
  }
}

// w[ty + 16a][tx + 16b] = values[a][b], stride B * 16 + 1.
template <int A, int B>
__device__ void store_micro_tile(float* w, const float (&values)[A][B]) {
#pragma unroll
  for (int i = 0; i < A; ++i) {
#pragma unroll
    for (int j = 0; j < B; ++j)
      w[(ty() + side * i) * (B * side + 1) + tx() + side * j] = values[i][j];
  }
}

// The max and the sum over the 16 lanes of a half-warp (one tile row).
__device__ __forceinline__ float row_max(float value) {
  for (int offset = side / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
}
__device__ __forceinline__ float row_sum(float value) {
  for (int offset = side / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

// out[first + r][tx + 16c] = scale * values[a][c] for the thread's rows
// r = ty + 16a below valid_rows; columns from head_dim on are not written.
template <int A, int C>
__device__ void store_rows(float* out, const float (&values)[A][C], int valid_rows, int first,
                           int head_dim, float scale) {
#pragma unroll
  for (int i = 0; i < A; ++i) {
    const int r = ty() + side * i;
    if (r >= valid_rows) continue;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int column = tx() + side * c;
      if (column < head_dim) {
        out[static_cast<std::int64_t>(first + r) * head_dim + column] = scale * values[i][c];
      }
    }
  }
}

}  // namespace cfr::kernels::reference_tiles
