// The streamed backward reference (tiled_reference.hpp). With L and D of
// every query row from tiled_reference_row_stats (a forward pass), and
// P_ij = exp(s_ij - L_i), dP_ij = dO_i . v_j, dS_ij = P_ij (dP_ij - D_i):
//   dQ_i = scale sum_j dS_ij k_j            a CTA per block of query rows,
//                                           streaming K/V tiles;
//   dK_j = scale sum_i dS_ij q_i, dV_j = sum_i P_ij dO_i
//                                           a CTA per block of key rows of
//                                           a K/V head, streaming the Q/dO
//                                           tiles of every query head of its
//                                           group (GQA sums over them).
// Each output row is owned by one CTA, so nothing is atomic; P and dS live
// one tile at a time in shared memory. Masks as the forward's: query i sees
// keys up to i + kv_len - seq_len when causal.

#include <cstdint>

#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/reference_tiles.cuh"
#include "kernels/stream_ordered_buffer.hpp"
#include "kernels/tiled_reference.hpp"

namespace cfr::kernels {
namespace {

using namespace reference_tiles;

// `own` rows a CTA owns and `streamed` rows a tile it streams. Q, dO, K, V
// tiles, `weights` [own, streamed] tiles (dS; P^T and dS^T) and the streamed
// rows' L and D stay under the 96 KB of shared memory a CTA may have on
// every GPU since sm_70.
template <int own_rows, int streamed_rows, int weights, int D>
struct BackwardTiles {
  static constexpr int own = own_rows;
  static constexpr int streamed = streamed_rows;
  static constexpr int own_tiles = own / side;
  static constexpr int streamed_tiles = streamed / side;
  static constexpr int columns = D / side;
  static constexpr std::size_t smem_bytes =
      sizeof(float) * (2 * tile_floats<D>(own) + 2 * tile_floats<D>(streamed) +
                       weights * own * (streamed + 1) + 2 * streamed);
  static_assert(smem_bytes <= 96 * 1024);
};
template <int D>
using QueryPassTiles = BackwardTiles<D <= 64 ? 64 : 32, D <= 64 ? 64 : 32, 1, D>;
template <int D>
using KeyPassTiles = BackwardTiles<D <= 64 ? 64 : 32, D <= 32 ? 64 : 32, 2, D>;

template <typename T>
struct BackwardArgs {
  const T* q;
  const T* k;
  const T* v;
  const T* d_o;
  const float* lse;     // [heads, seq_len]
  const float* d_rows;  // [heads, seq_len]
  float* d_q;
  float* d_k;
  float* d_v;
  RowList list;  // the owned rows: queries for dQ, keys of a K/V head for dK, dV
  ReferenceDims dims;
};

// dQ of a block of listed query rows.
template <typename T, int D>
__global__ void __launch_bounds__(threads) tiled_backward_dq(BackwardArgs<T> args) {
  using Tiles = QueryPassTiles<D>;
  constexpr int A = Tiles::own_tiles;
  constexpr int B = Tiles::streamed_tiles;
  constexpr int C = Tiles::columns;
  extern __shared__ float smem[];
  float* q_s = smem;
  float* do_s = q_s + tile_floats<D>(Tiles::own);
  float* k_s = do_s + tile_floats<D>(Tiles::own);
  float* v_s = k_s + tile_floats<D>(Tiles::streamed);
  float* ds_s = v_s + tile_floats<D>(Tiles::streamed);

  const ReferenceDims& dims = args.dims;
  const OwnedBlock block = owned_block<Tiles::own>(args.list);
  const std::int64_t q_offset = block.head * dims.seq_len;
  const std::int64_t kv_head = block.head / dims.group;
  const T* k_head = args.k + kv_head * dims.kv_len * dims.head_dim;
  const T* v_head = args.v + kv_head * dims.kv_len * dims.head_dim;
  const int keys = dims.keys_seen(block.index(block.valid - 1));

  load_tile<T, Tiles::own, D>(q_s, args.q + q_offset * dims.head_dim, block.rows, block.first,
                              block.valid, dims.head_dim, dims.scale);
  load_tile<T, Tiles::own, D>(do_s, args.d_o + q_offset * dims.head_dim, block.rows, block.first,
                              block.valid, dims.head_dim, 1.f);
  int limit[A];  // keys each of the thread's rows sees; 0 for a row past the block's
  float lse[A];
  float d_row[A];
  float acc[A][C] = {};
#pragma unroll
  for (int a = 0; a < A; ++a) {
    const int r = ty() + side * a;
    const int i = r < block.valid ? block.index(r) : 0;
    limit[a] = r < block.valid ? dims.keys_seen(i) : 0;
    lse[a] = args.lse[q_offset + i];
    d_row[a] = args.d_rows[q_offset + i];
  }

  for (int start = 0; start < keys; start += Tiles::streamed) {
    const int tile_keys = min(Tiles::streamed, dims.kv_len - start);
    __syncthreads();
    load_tile<T, Tiles::streamed, D>(k_s, k_head, nullptr, start, tile_keys, dims.head_dim, 1.f);
    load_tile<T, Tiles::streamed, D>(v_s, v_head, nullptr, start, tile_keys, dims.head_dim, 1.f);
    __syncthreads();
    float s[A][B] = {};
    float dp[A][B] = {};
    add_row_dots<A, B, D>(s, q_s, k_s);
    add_row_dots<A, B, D>(dp, do_s, v_s);
#pragma unroll
    for (int a = 0; a < A; ++a) {
#pragma unroll
      for (int b = 0; b < B; ++b) {
        const bool seen = start + tx() + side * b < limit[a];
        const float p = seen ? expf(s[a][b] - lse[a]) : 0.f;
        s[a][b] = p * (dp[a][b] - d_row[a]);  // dS
      }
    }
    store_micro_tile<A, B>(ds_s, s);
    __syncthreads();
    add_weighted_rows<A, C, Tiles::streamed, D>(acc, ds_s, k_s);
  }
  store_rows<A, C>(args.d_q + (block.head * args.list.count + block.first) * dims.head_dim, acc,
                   block.valid, 0, dims.head_dim, dims.scale);
}

// dK and dV of a block of listed key rows of one K/V head.
template <typename T, int D>
__global__ void __launch_bounds__(threads) tiled_backward_dkdv(BackwardArgs<T> args) {
  using Tiles = KeyPassTiles<D>;
  constexpr int A = Tiles::own_tiles;
  constexpr int B = Tiles::streamed_tiles;
  constexpr int C = Tiles::columns;
  extern __shared__ float smem[];
  float* k_s = smem;
  float* v_s = k_s + tile_floats<D>(Tiles::own);
  float* q_s = v_s + tile_floats<D>(Tiles::own);
  float* do_s = q_s + tile_floats<D>(Tiles::streamed);
  float* p_s = do_s + tile_floats<D>(Tiles::streamed);  // P^T: [own keys][streamed queries]
  float* ds_s = p_s + Tiles::own * (Tiles::streamed + 1);
  float* lse_s = ds_s + Tiles::own * (Tiles::streamed + 1);
  float* d_s = lse_s + Tiles::streamed;

  const ReferenceDims& dims = args.dims;
  const OwnedBlock block = owned_block<Tiles::own>(args.list);  // block.head: a K/V head
  const std::int64_t kv_offset = block.head * dims.kv_len * dims.head_dim;
  // The first query that sees the block's first (smallest) key.
  const int first_query = dims.causal ? max(0, block.index(0) - dims.shift()) : 0;

  load_tile<T, Tiles::own, D>(k_s, args.k + kv_offset, block.rows, block.first, block.valid,
                              dims.head_dim, 1.f);
  load_tile<T, Tiles::own, D>(v_s, args.v + kv_offset, block.rows, block.first, block.valid,
                              dims.head_dim, 1.f);
  int key[A];  // -1 for a row past the block's
#pragma unroll
  for (int a = 0; a < A; ++a) {
    const int r = ty() + side * a;
    key[a] = r < block.valid ? block.index(r) : -1;
  }
  float d_k[A][C] = {};
  float d_v[A][C] = {};

  for (std::int64_t head = block.head * dims.group; head < (block.head + 1) * dims.group; ++head) {
    const std::int64_t q_offset = head * dims.seq_len;
    for (int start = first_query; start < dims.seq_len; start += Tiles::streamed) {
      const int tile_queries = min(Tiles::streamed, dims.seq_len - start);
      __syncthreads();
      load_tile<T, Tiles::streamed, D>(q_s, args.q + q_offset * dims.head_dim, nullptr, start,
                                       tile_queries, dims.head_dim, dims.scale);
      load_tile<T, Tiles::streamed, D>(do_s, args.d_o + q_offset * dims.head_dim, nullptr, start,
                                       tile_queries, dims.head_dim, 1.f);
      load_vector(lse_s, Tiles::streamed, args.lse + q_offset, start, tile_queries);
      load_vector(d_s, Tiles::streamed, args.d_rows + q_offset, start, tile_queries);
      __syncthreads();
      float s[A][B] = {};  // S^T: [key][query]
      float dp[A][B] = {};
      add_row_dots<A, B, D>(s, k_s, q_s);
      add_row_dots<A, B, D>(dp, v_s, do_s);
#pragma unroll
      for (int a = 0; a < A; ++a) {
#pragma unroll
        for (int b = 0; b < B; ++b) {
          const int column = tx() + side * b;
          const bool seen = key[a] >= 0 && column < tile_queries &&
                            (!dims.causal || key[a] <= start + column + dims.shift());
          const float p = seen ? expf(s[a][b] - lse_s[column]) : 0.f;
          s[a][b] = p;
          dp[a][b] = p * (dp[a][b] - d_s[column]);  // dS^T
        }
      }
      store_micro_tile<A, B>(p_s, s);
      store_micro_tile<A, B>(ds_s, dp);
      __syncthreads();
      add_weighted_rows<A, C, Tiles::streamed, D>(d_v, p_s, do_s);
      add_weighted_rows<A, C, Tiles::streamed, D>(d_k, ds_s, q_s);
    }
  }
  const std::int64_t out_first = block.head * args.list.count + block.first;
  // q_s holds scale * q: dK needs no other factor.
  store_rows<A, C>(args.d_k + out_first * dims.head_dim, d_k, block.valid, 0, dims.head_dim, 1.f);
  store_rows<A, C>(args.d_v + out_first * dims.head_dim, d_v, block.valid, 0, dims.head_dim, 1.f);
}

constexpr DTypeSet every_dtype{.fp16 = true, .bf16 = true, .fp32 = true};

// A pass over `rows` (every one of `total` when rows.rows is null) in blocks
// of `own`, for each of `heads` heads.
template <int own, typename T>
cudaError_t launch_pass(void (*kernel)(BackwardArgs<T>), std::size_t smem_bytes,
                        BackwardArgs<T> args, std::size_t heads, ReferenceRows rows, int total,
                        cudaStream_t stream) {
  args.list.rows = rows.rows;
  args.list.count = rows.rows != nullptr ? rows.count : total;
  const unsigned blocks = pass_blocks(heads, args.list.count, own, args.list.blocks_per_head);
  if (blocks == 0) return cudaErrorInvalidValue;
  return launch_kernel(kernel, dim3(blocks), threads, smem_bytes, stream, args);
}

bool valid_rows(ReferenceRows rows, int total) {
  return rows.rows == nullptr || (rows.count > 0 && rows.count <= total);
}

}  // namespace

cudaError_t tiled_reference_backward(const AttentionShape& shape, const void* q, const void* k,
                                     const void* v, const void* d_o, float* d_q, float* d_k,
                                     float* d_v, ReferenceRows query_rows, ReferenceRows key_rows,
                                     cudaStream_t stream) {
  if (!tiled_reference_supports(shape) || d_q == nullptr || d_k == nullptr || d_v == nullptr ||
      !valid_rows(query_rows, shape.seq_len) || !valid_rows(key_rows, shape.keys())) {
    return cudaErrorInvalidValue;
  }
  const std::size_t rows = heads_total(shape) * static_cast<std::size_t>(shape.seq_len);
  StreamOrderedBuffer row_stats(2 * rows * sizeof(float), stream);
  CFR_CUDA_CHECK_NOEXCEPT(row_stats.status());
  float* lse = row_stats.as<float>();
  float* d_rows = lse + rows;
  CFR_CUDA_CHECK_NOEXCEPT(tiled_reference_row_stats(shape, q, k, v, d_o, lse, d_rows, stream));
  return with_element_type<every_dtype>(shape.dtype, [&]<typename T>() {
    return with_padded_head_dim(shape.head_dim, [&]<int D>() {
      const BackwardArgs<T> args{static_cast<const T*>(q),
                                 static_cast<const T*>(k),
                                 static_cast<const T*>(v),
                                 static_cast<const T*>(d_o),
                                 lse,
                                 d_rows,
                                 d_q,
                                 d_k,
                                 d_v,
                                 {},
                                 reference_dims(shape)};
      const std::size_t kv_heads =
          static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.key_heads());
      CFR_CUDA_CHECK_NOEXCEPT(
          launch_pass<KeyPassTiles<D>::own>(tiled_backward_dkdv<T, D>, KeyPassTiles<D>::smem_bytes,
                                            args, kv_heads, key_rows, shape.keys(), stream));
      return launch_pass<QueryPassTiles<D>::own>(
          tiled_backward_dq<T, D>, QueryPassTiles<D>::smem_bytes, args, heads_total(shape),
          query_rows, shape.seq_len, stream);
    });
  });
}

}  // namespace cfr::kernels
