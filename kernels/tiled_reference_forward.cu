// The tiled forward reference (tiled_reference.hpp): a CTA per block of
// `rows` listed query rows of one head, K/V tiles of `keys` rows through
// shared memory, the online softmax in fp32:
//   s_j = scale q_i . k_j (masked: j past the row's last key is -inf),
//   m' = max(m, max_j s_j),  l' = l e^(m - m') + sum_j e^(s_j - m'),
//   acc' = acc e^(m - m') + sum_j e^(s_j - m') v_j;
//   O_i = acc / l,  L_i = m + log l,  and for the backward D_i = dO_i . O_i.
// Query head h reads K/V head h / group; the causal mask is bottom-right
// aligned (query i sees keys up to i + kv_len - seq_len). The block's rows
// are sorted, so its last row sees the most keys; a row's first tile always
// holds key 0, which it sees, so m is finite after it.

#include <cmath>
#include <cstdint>

#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/reference_tiles.cuh"
#include "kernels/tiled_reference.hpp"

namespace cfr::kernels {
namespace {

using namespace reference_tiles;

// 64 query rows; 64 keys a tile, 32 at d 128, so that the four tiles stay
// under the 96 KB of shared memory a CTA may have on every GPU since sm_70.
template <int D>
struct ForwardTiles {
  static constexpr int rows = 64;
  static constexpr int keys = D <= 64 ? 64 : 32;
  static constexpr int row_tiles = rows / side;  // the thread's rows
  static constexpr int key_tiles = keys / side;  // the thread's keys of a tile
  static constexpr int columns = D / side;       // the thread's columns of O
  static constexpr std::size_t smem_bytes =
      sizeof(float) * (tile_floats<D>(rows) + 2 * tile_floats<D>(keys) + rows * (keys + 1));
  static_assert(smem_bytes <= 96 * 1024);
};

// What a launch computes, beyond Q, K, V: the listed rows' outputs (o may be
// null), and D of each row when d_o is given.
template <typename T>
struct ForwardArgs {
  const T* q;
  const T* k;
  const T* v;
  const T* d_o;  // null: no D
  float* o;      // null: O not stored
  float* lse;
  float* d_rows;
  RowList list;
  ReferenceDims dims;
};

template <typename T, int D>
__global__ void __launch_bounds__(threads) tiled_forward(ForwardArgs<T> args) {
  using Tiles = ForwardTiles<D>;
  constexpr int A = Tiles::row_tiles;
  constexpr int B = Tiles::key_tiles;
  constexpr int C = Tiles::columns;
  extern __shared__ float smem[];
  float* q_s = smem;
  float* k_s = q_s + tile_floats<D>(Tiles::rows);
  float* v_s = k_s + tile_floats<D>(Tiles::keys);
  float* p_s = v_s + tile_floats<D>(Tiles::keys);

  const ReferenceDims& dims = args.dims;
  const OwnedBlock block = owned_block<Tiles::rows>(args.list);
  const std::int64_t kv_head = block.head / dims.group;
  const T* k_head = args.k + kv_head * dims.kv_len * dims.head_dim;
  const T* v_head = args.v + kv_head * dims.kv_len * dims.head_dim;
  const int keys = dims.keys_seen(block.index(block.valid - 1));

  load_tile<T, Tiles::rows, D>(q_s, args.q + block.head * dims.seq_len * dims.head_dim, block.rows,
                               block.first, block.valid, dims.head_dim, dims.scale);
  int limit[A];  // keys each of the thread's rows sees; 0 for a row past the block's
  float m[A];
  float l[A];
  float acc[A][C];
#pragma unroll
  for (int a = 0; a < A; ++a) {
    const int r = ty() + side * a;
    limit[a] = r < block.valid ? dims.keys_seen(block.index(r)) : 0;
    m[a] = -INFINITY;
    l[a] = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) acc[a][c] = 0.f;
  }

  for (int start = 0; start < keys; start += Tiles::keys) {
    const int tile_keys = min(Tiles::keys, dims.kv_len - start);
    __syncthreads();  // the previous tile's K, V and P are read
    load_tile<T, Tiles::keys, D>(k_s, k_head, nullptr, start, tile_keys, dims.head_dim, 1.f);
    load_tile<T, Tiles::keys, D>(v_s, v_head, nullptr, start, tile_keys, dims.head_dim, 1.f);
    __syncthreads();
    float s[A][B] = {};
    add_row_dots<A, B, D>(s, q_s, k_s);
#pragma unroll
    for (int a = 0; a < A; ++a) {
      float tile_max = -INFINITY;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        if (start + tx() + side * b >= limit[a]) s[a][b] = -INFINITY;
        tile_max = fmaxf(tile_max, s[a][b]);
      }
      const float m_new = fmaxf(m[a], row_max(tile_max));
      // A row that sees no key of this tile keeps its state (m_new is m, or
      // -inf for a row past the block's, which sees none at all).
      const float correction = m_new == -INFINITY ? 1.f : expf(m[a] - m_new);
      float sum = 0.f;
#pragma unroll
      for (int b = 0; b < B; ++b) {
        s[a][b] = s[a][b] == -INFINITY ? 0.f : expf(s[a][b] - m_new);
        sum += s[a][b];
      }
      l[a] = l[a] * correction + row_sum(sum);
      m[a] = m_new;
#pragma unroll
      for (int c = 0; c < C; ++c) acc[a][c] *= correction;
    }
    store_micro_tile<A, B>(p_s, s);
    __syncthreads();
    add_weighted_rows<A, C, Tiles::keys, D>(acc, p_s, v_s);
  }

  const std::int64_t out_first = block.head * args.list.count + block.first;
#pragma unroll
  for (int a = 0; a < A; ++a) {
    const float inverse = limit[a] > 0 ? 1.f / l[a] : 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) acc[a][c] *= inverse;
    const int r = ty() + side * a;
    if (r < block.valid && tx() == 0) args.lse[out_first + r] = m[a] + logf(l[a]);
    if (args.d_o == nullptr) continue;
    // D_i = dO_i . O_i over the thread's columns, then the row's 16 lanes.
    float dot = 0.f;
    if (r < block.valid) {
      const T* d_o_row = args.d_o + (block.head * dims.seq_len + block.index(r)) * dims.head_dim;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int column = tx() + side * c;
        if (column < dims.head_dim) dot = fmaf(acc[a][c], to_float(d_o_row[column]), dot);
      }
    }
    dot = row_sum(dot);
    if (r < block.valid && tx() == 0) args.d_rows[out_first + r] = dot;
  }
  if (args.o != nullptr) {
    store_rows<A, C>(args.o + out_first * dims.head_dim, acc, block.valid, 0, dims.head_dim, 1.f);
  }
}

constexpr DTypeSet every_dtype{.fp16 = true, .bf16 = true, .fp32 = true};

// The forward over `rows` of every head, storing O when `o` is given and D
// when `d_o` is.
cudaError_t launch_forward(const AttentionShape& shape, const void* q, const void* k, const void* v,
                           const void* d_o, float* o, float* lse, float* d_rows, ReferenceRows rows,
                           cudaStream_t stream) {
  if (!tiled_reference_supports(shape) || q == nullptr || k == nullptr || v == nullptr ||
      lse == nullptr) {
    return cudaErrorInvalidValue;
  }
  const int row_count = rows.rows != nullptr ? rows.count : shape.seq_len;
  if (row_count <= 0 || row_count > shape.seq_len) return cudaErrorInvalidValue;
  return with_element_type<every_dtype>(shape.dtype, [&]<typename T>() {
    return with_padded_head_dim(shape.head_dim, [&]<int D>() {
      using Tiles = ForwardTiles<D>;
      int blocks_per_head = 0;
      const unsigned blocks =
          pass_blocks(heads_total(shape), row_count, Tiles::rows, blocks_per_head);
      if (blocks == 0) return cudaErrorInvalidValue;
      const ForwardArgs<T> args{static_cast<const T*>(q),
                                static_cast<const T*>(k),
                                static_cast<const T*>(v),
                                static_cast<const T*>(d_o),
                                o,
                                lse,
                                d_rows,
                                {rows.rows, row_count, blocks_per_head},
                                reference_dims(shape)};
      return launch_kernel(tiled_forward<T, D>, dim3(blocks), threads, Tiles::smem_bytes, stream,
                           args);
    });
  });
}

}  // namespace

bool tiled_reference_supports(const AttentionShape& shape) {
  return has_positive_dimensions(shape) && padded_head_dim(shape.head_dim) > 0 &&
         shape.page_size == 0 && shape.heads % shape.key_heads() == 0 &&
         (!shape.causal || shape.seq_len <= shape.keys());
}

cudaError_t tiled_reference_forward(const AttentionShape& shape, const void* q, const void* k,
                                    const void* v, float* o, float* lse, ReferenceRows query_rows,
                                    cudaStream_t stream) {
  if (o == nullptr) return cudaErrorInvalidValue;
  return launch_forward(shape, q, k, v, nullptr, o, lse, nullptr, query_rows, stream);
}

cudaError_t tiled_reference_row_stats(const AttentionShape& shape, const void* q, const void* k,
                                      const void* v, const void* d_o, float* lse, float* d_rows,
                                      cudaStream_t stream) {
  if (d_o == nullptr || d_rows == nullptr) return cudaErrorInvalidValue;
  return launch_forward(shape, q, k, v, d_o, nullptr, lse, d_rows, {}, stream);
}

}  // namespace cfr::kernels
