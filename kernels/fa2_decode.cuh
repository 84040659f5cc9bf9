#pragma once

// Split-KV decoding on mma.sync (flash-decoding), sm_80+, fp16 and bf16 with
// fp32 accumulate: few query tokens against a long K/V cache, the
// memory-bound half of attention.
//
// One CTA per (split of the keys, block of query rows, kv head, batch entry).
// Its query rows are every query head of the kv head's group times every
// query token (row r: head r / q_len of the group, token r % q_len), so the
// group shares one tensor-core tile and each K/V byte is read once per group,
// not once per query head. The keys are split across CTAs so that the grid
// fills the GPU whatever the batch (kv_splits.hpp chooses how many). With one
// split the CTA writes O and LSE; with more, each writes its split's (O, LSE)
// to the workspace and the last CTA of a group to finish (a counter per
// group) combines them, so a launch is one kernel whatever the split.
//
// The warps of a CTA split its rows (16 per warp, row_warps of them) and each
// K/V tile's keys (key_warps = warps / row_warps slices): with one to sixteen
// query rows every warp streams its own slice of each tile, so tensor-core
// work and exponentials spread over the CTA instead of one warp doing all of
// it. Each warp keeps its own online softmax (m, l, O) over its keys; the
// warps are combined through shared memory at the end. (Warps that each
// compute S for the whole tile and O for a slice of the head dim need no
// combine, but were 8 % slower at the same tiles on the H200: four times the
// S work and K reads from shared memory; docs/perf-notes.md.)
//
// K and V tiles stream through a `stages`-deep cp.async ring, swizzled as in
// fa2_mma (kernels/fa2_mma.cuh, whose PTX wrappers and address helpers this
// file uses). The cache is contiguous, [batch, kv_heads, kv_len, d], or paged:
// pages of page_size tokens laid out [pages, kv_heads, page_size, d] (HND: a
// head's tokens contiguous within a page, as in vLLM's original paged kernel
// and FlashInfer's HND layout), reached through a [batch,
// pages_per_sequence] table of page indices that is read a tile ahead of the
// copies that use it.
//
// Causal with q_len <= kv_len is bottom-right aligned, as in FlashAttention
// >= 2.1 and cuDNN: query token i sees keys 0 .. i + kv_len - q_len.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/async_copy.cuh"
#include "kernels/current_device.hpp"
#include "kernels/fa2_mma.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/softmax_constants.hpp"

namespace cfr::kernels::decode {

template <int HeadDim, int Warps, int RowWarps, int Bc, int Stages, int MinCtasPerSm,
          int TableEntries = 0, int PageTokensMin = 1, bool PagedOffsets32 = false>
struct DecodeConfig {
  static constexpr int head_dim = HeadDim;
  static constexpr int warps = Warps;
  static constexpr int threads = 32 * warps;
  static constexpr int row_warps = RowWarps;  // 16-row MMA tiles of query rows per CTA
  static constexpr int key_warps = warps / row_warps;
  static constexpr int rows = 16 * row_warps;  // query rows per CTA
  static constexpr int bc = Bc;                // keys per tile
  static constexpr int keys_per_warp = bc / key_warps;
  static constexpr int stages = Stages;
  static constexpr int min_ctas_per_sm = MinCtasPerSm;

  static constexpr int row_bytes = head_dim * 2;
  static constexpr int chunks_per_row = head_dim / 8;  // 16-byte chunks
  static constexpr int rows_per_pass = threads / chunks_per_row;
  static constexpr int kv_passes = bc / rows_per_pass;

  static constexpr int q_bytes = rows * row_bytes;
  static constexpr int kv_tile_bytes = bc * row_bytes;
  static constexpr int k_offset = q_bytes;
  static constexpr int v_offset = k_offset + stages * kv_tile_bytes;
  static constexpr int pipeline_bytes = v_offset + stages * kv_tile_bytes;
  // A paged cache's split reads its page indices into shared memory once, at
  // the start, when they number at most table_entries (0: every tile reads
  // them from the table in global memory, a tile ahead).
  static constexpr int table_entries = TableEntries;
  static constexpr int table_offset = pipeline_bytes;
  // The fewest tokens a page of the paged caches this config takes holds
  // (the launcher refuses smaller pages): a thread's rows are rows_per_pass
  // apart, so passes_per_page of its passes share one page, whose index and
  // address one lookup gives (1: every pass looks its page up).
  static constexpr int page_tokens_min = PageTokensMin;
  static constexpr int passes_per_page = std::clamp(page_tokens_min / rows_per_pass, 1, kv_passes);
  // A paged cache's rows addressed by 32-bit row numbers: each pass's page
  // slab (page, kv head) as its first row, formed once a tile (resolve()), a
  // row its in-page offset on, widened once to address it. Without it every
  // row's address is a 64-bit product of page, kv heads and page size: a
  // paged tile cost a warp 660 instructions against the contiguous cache's
  // 462 (docs/perf-notes.md, round 14). Exact while the pool has fewer than
  // 2^32 rows, 512 GiB at d = 64: more than a GPU holds, which the launcher
  // checks against the device's memory.
  static constexpr bool paged_offsets_32 = PagedOffsets32;
  // After the pass, over the K/V ring: every warp's unnormalized O, then its
  // (m, l), in fp32.
  static constexpr int combine_bytes = 4 * warps * 16 * (head_dim + 2);
  static constexpr int smem_bytes = pipeline_bytes + 4 * table_entries > q_bytes + combine_bytes
                                        ? pipeline_bytes + 4 * table_entries
                                        : q_bytes + combine_bytes;

  static constexpr int qk_steps = head_dim / 16;
  static constexpr int s_tiles = keys_per_warp / 8;
  static constexpr int pv_steps = keys_per_warp / 16;
  static constexpr int o_tiles = head_dim / 8;

  static_assert(warps % row_warps == 0 && (row_warps == 1 || row_warps == 2 || row_warps == 4));
  static_assert(head_dim % 32 == 0 && keys_per_warp % 16 == 0 && stages >= 2);
  static_assert(bc % rows_per_pass == 0 && threads % chunks_per_row == 0);
  // Whole powers of two of rows per pass keep the swizzle XOR-separable:
  // key(row + pass * rows_per_pass) = key(row) ^ key(pass * rows_per_pass).
  static_assert((rows_per_pass & (rows_per_pass - 1)) == 0 && rows_per_pass >= 2);
  static_assert((page_tokens_min & (page_tokens_min - 1)) == 0 && kv_passes % passes_per_page == 0);
  static_assert(q_bytes % 1024 == 0 && kv_tile_bytes % 1024 == 0,
                "tiles start on the swizzle's 1024-byte period");
};

// Everything one launch reads; launch_decode fills the split's fields.
template <typename T>
struct DecodeParams {
  const T* q;  // [batch, heads, q_len, d]
  const T* k;  // contiguous [batch, kv_heads, kv_len, d], or pages [pages, kv_heads, page_size, d]
  const T* v;
  T* o;                   // [batch, heads, q_len, d]
  float* lse;             // [batch, heads, q_len], natural log
  const int* page_table;  // [batch, pages_per_sequence]; paged caches only
  int pages_per_sequence;
  int page_shift;              // page_size = 2^page_shift tokens
  int heads, kv_heads, group;  // group = heads / kv_heads
  int q_len, kv_len;
  int group_rows;  // group * q_len: the query rows that share one kv head
  int row_blocks;  // CTAs over those rows
  bool causal;
  float scale_log2;
  int splits;
  int tiles_per_split;
  unsigned* arrivals;  // [batch, kv_heads, row_blocks]: splits done; zero between launches
  float* partial_o;    // [splits, batch * heads * q_len, d]: each split's O / l
  float* partial_lse;  // [splits, batch * heads * q_len]
};

// A CTA's place: batch entry, kv head, first of its group rows.
struct GroupPosition {
  int batch;
  int kv_head;
  int first_row;
};

// Where this thread's rows of one tile come from: contiguous, or paged with
// the page indices fetched a tile before the copies that use them, so the
// table's latency overlaps a tile's compute instead of stalling the copies.
template <typename T, typename Cfg, bool paged>
struct KvCursor {
  // Each pass's page index; with Cfg::paged_offsets_32, after resolve(), its
  // page slab's first row.
  std::conditional_t<Cfg::paged_offsets_32, std::uint32_t, int> page[paged ? Cfg::kv_passes : 1];
  // The split's page indices in shared memory (Cfg::table_entries): the
  // first one's place in the sequence's table, and how many; count 0 when
  // they did not fit, and the table in global memory is read instead.
  const int* shared_table = nullptr;
  int first_entry = 0;
  int entries = 0;

  // Called by every thread of the CTA before its first fetch; ends with a
  // barrier when it fills the shared table.
  __device__ __forceinline__ void stage_table(const DecodeParams<T>& p, int batch, int first_key,
                                              int end_key, int* shared) {
    if constexpr (paged && Cfg::table_entries > 0) {
      first_entry = first_key >> p.page_shift;
      const int count = ((min(end_key, p.kv_len) - 1) >> p.page_shift) - first_entry + 1;
      if (count > Cfg::table_entries) return;
      const int* table = p.page_table + static_cast<std::int64_t>(batch) * p.pages_per_sequence;
      for (int i = static_cast<int>(threadIdx.x); i < count; i += Cfg::threads) {
        shared[i] = __ldg(table + first_entry + i);
      }
      shared_table = shared;
      entries = count;
      __syncthreads();
    }
  }

  __device__ __forceinline__ void fetch(const DecodeParams<T>& p, int batch, int first) {
    if constexpr (paged) {
      const int* table = p.page_table + static_cast<std::int64_t>(batch) * p.pages_per_sequence;
      const int thread_row = static_cast<int>(threadIdx.x) / Cfg::chunks_per_row;
#pragma unroll
      for (int pass = 0; pass < Cfg::kv_passes; pass += Cfg::passes_per_page) {
        const int token = min(first + thread_row + pass * Cfg::rows_per_pass, p.kv_len - 1);
        if (Cfg::table_entries > 0 && entries > 0) {
          // A fetch past the split (the prologue's look-ahead) is never used:
          // clamped into the shared table.
          const int entry = min(max((token >> p.page_shift) - first_entry, 0), entries - 1);
          page[pass] = shared_table[entry];
        } else {
          page[pass] = __ldg(table + (token >> p.page_shift));
        }
      }
    }
  }

  // With Cfg::paged_offsets_32, turns the page indices fetch() read a tile
  // ago into their page slabs' first rows, just before the copies that
  // use them: formed at fetch, the arithmetic waited on the table's load and
  // took back the tile of latency the look-ahead hides (round 14: 16-token
  // pages 12 % slower without the shared table, faster with it).
  __device__ __forceinline__ void resolve(const DecodeParams<T>& p, int kv_head) {
    if constexpr (paged && Cfg::paged_offsets_32) {
#pragma unroll
      for (int pass = 0; pass < Cfg::kv_passes; pass += Cfg::passes_per_page) {
        page[pass] = (page[pass] * static_cast<std::uint32_t>(p.kv_heads) +
                      static_cast<std::uint32_t>(kv_head))
                     << p.page_shift;
      }
    }
  }

  __device__ __forceinline__ const T* row(const T* cache, const DecodeParams<T>& p, int batch,
                                          int kv_head, int token, int pass) const {
    if constexpr (paged && Cfg::paged_offsets_32) {
      const std::uint32_t row =
          page[pass] + static_cast<std::uint32_t>(token & ((1 << p.page_shift) - 1));
      return cache + static_cast<std::size_t>(row) * Cfg::head_dim;
    }
    std::int64_t index;
    if constexpr (paged) {
      // Shifts, not divisions: a runtime division per row cost the paged
      // cache 67 % of the contiguous one's speed on the H200 (perf-notes).
      index = ((static_cast<std::int64_t>(page[pass]) * p.kv_heads + kv_head) << p.page_shift) |
              (token & ((1 << p.page_shift) - 1));
    } else {
      index = (static_cast<std::int64_t>(batch) * p.kv_heads + kv_head) * p.kv_len + token;
    }
    return cache + index * Cfg::head_dim;
  }
};

// Keys [first, first + bc) of one kv head into a swizzled tile; keys at or
// past kv_len are zero-filled (their scores are masked, their V rows meet
// P = 0).
template <typename T, typename Cfg, bool paged>
__device__ __forceinline__ void load_kv_tile(std::uint32_t tile, const T* cache,
                                             const KvCursor<T, Cfg, paged>& cursor,
                                             const DecodeParams<T>& p, const GroupPosition& at,
                                             int first) {
  const int thread_row = static_cast<int>(threadIdx.x) / Cfg::chunks_per_row;
  const int column = static_cast<int>(threadIdx.x) % Cfg::chunks_per_row;
  const std::uint32_t lane_offset = fa2::swizzled(thread_row, column, Cfg::row_bytes);
#pragma unroll
  for (int pass = 0; pass < Cfg::kv_passes; ++pass) {
    const int token = first + thread_row + pass * Cfg::rows_per_pass;
    const bool valid = token < p.kv_len;
    // A paged pass reaches its row from its page group's lead pass: the same
    // page, (pass - lead) x rows_per_pass rows further.
    const int lead = paged ? pass - pass % Cfg::passes_per_page : pass;
    const T* src = valid ? cursor.row(cache, p, at.batch, at.kv_head,
                                      first + thread_row + lead * Cfg::rows_per_pass, lead) +
                               (pass - lead) * Cfg::rows_per_pass * Cfg::head_dim + column * 8
                         : cache;
    copy_16_bytes_async_shared(
        tile + (lane_offset ^ fa2::swizzled(pass * Cfg::rows_per_pass, 0, Cfg::row_bytes)), src,
        valid);
  }
}

// The group's query rows; rows past the group are zero-filled and never
// written.
template <typename T, typename Cfg>
__device__ __forceinline__ void load_q_rows(std::uint32_t tile, const DecodeParams<T>& p,
                                            const GroupPosition& at) {
  const int thread_row = static_cast<int>(threadIdx.x) / Cfg::chunks_per_row;
  const int column = static_cast<int>(threadIdx.x) % Cfg::chunks_per_row;
#pragma unroll
  for (int row = thread_row; row < Cfg::rows; row += Cfg::rows_per_pass) {
    const int r = at.first_row + row;
    const bool valid = r < p.group_rows;
    const std::int64_t head = static_cast<std::int64_t>(at.batch) * p.heads + at.kv_head * p.group +
                              (valid ? r / p.q_len : 0);
    const T* src = p.q + (head * p.q_len + (valid ? r % p.q_len : 0)) * Cfg::head_dim + column * 8;
    copy_16_bytes_async_shared(tile + fa2::swizzled(row, column, Cfg::row_bytes), src, valid);
  }
}

// O's and LSE's row of group row r: [batch, head, token].
template <typename T>
__device__ __forceinline__ std::int64_t output_row(const DecodeParams<T>& p,
                                                   const GroupPosition& at, int r) {
  const int head = at.kv_head * p.group + r / p.q_len;
  return (static_cast<std::int64_t>(at.batch) * p.heads + head) * p.q_len + r % p.q_len;
}

// Four dims of one finished row: O (normalized) in T, and its LSE by the
// thread holding dims 0-3.
template <typename T>
__device__ __forceinline__ void store_row_quad(const DecodeParams<T>& p, std::int64_t out, int dim,
                                               int head_dim, const float (&acc)[4], float inverse,
                                               float lse) {
  const std::uint32_t lo = fa2::pack_pair<T>(acc[0] * inverse, acc[1] * inverse);
  const std::uint32_t hi = fa2::pack_pair<T>(acc[2] * inverse, acc[3] * inverse);
  *reinterpret_cast<uint2*>(p.o + out * head_dim + dim) = make_uint2(lo, hi);
  if (dim == 0) p.lse[out] = lse;
}

// The last split of a group to finish: every split's (O, LSE) of the CTA's
// rows combined, O = sum_s w_s O_s / sum_s w_s with w_s = exp(lse_s - max
// lse), LSE = max + log(sum w). The partials are read through L2
// (ld.global.cg): other CTAs wrote them, and L1 is not coherent.
template <typename T, typename Cfg>
__device__ __forceinline__ void combine_splits(const DecodeParams<T>& p, const GroupPosition& at,
                                               std::int64_t rows_total) {
  constexpr int quads_per_row = Cfg::head_dim / 4;
  for (int item = static_cast<int>(threadIdx.x); item < Cfg::rows * quads_per_row;
       item += Cfg::threads) {
    const int r = at.first_row + item / quads_per_row;
    const int dim = (item % quads_per_row) * 4;
    if (r >= p.group_rows) continue;
    const std::int64_t out = output_row(p, at, r);
    float m = -INFINITY;
    for (int s = 0; s < p.splits; ++s) m = fmaxf(m, __ldcg(p.partial_lse + s * rows_total + out));
    float total = 0.f;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    for (int s = 0; s < p.splits; ++s) {
      const float split_lse = __ldcg(p.partial_lse + s * rows_total + out);
      const float weight =
          split_lse == -INFINITY ? 0.f : fa2::exp2_approx((split_lse - m) * log2_e);
      total += weight;
      const float4 part = __ldcg(reinterpret_cast<const float4*>(
          p.partial_o + (s * rows_total + out) * Cfg::head_dim + dim));
      acc[0] += weight * part.x;
      acc[1] += weight * part.y;
      acc[2] += weight * part.z;
      acc[3] += weight * part.w;
    }
    store_row_quad(p, out, dim, Cfg::head_dim, acc, total > 0.f ? 1.f / total : 0.f,
                   total > 0.f ? m + logf(total) : -INFINITY);
  }
}

template <typename T, typename Cfg, bool paged>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_ctas_per_sm)
    fa2_decode_forward(const DecodeParams<T> p) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ bool last_split;
  const auto smem_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t q_tile = smem_base;
  const std::uint32_t k_tiles = smem_base + Cfg::k_offset;
  const std::uint32_t v_tiles = smem_base + Cfg::v_offset;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int lane_row = lane / 4;
  const int quad = lane % 4;
  const int row_warp = warp / Cfg::key_warps;
  const int key_warp = warp % Cfg::key_warps;

  const int row_block = static_cast<int>(blockIdx.x) % p.row_blocks;
  const int split = static_cast<int>(blockIdx.x) / p.row_blocks;
  const GroupPosition at{static_cast<int>(blockIdx.z), static_cast<int>(blockIdx.y),
                         row_block * Cfg::rows};
  const int total_tiles = (p.kv_len + Cfg::bc - 1) / Cfg::bc;
  const int first_tile = split * p.tiles_per_split;
  const int tiles = min(total_tiles, first_tile + p.tiles_per_split) - first_tile;

  KvCursor<T, Cfg, paged> cursor;
  load_q_rows<T, Cfg>(q_tile, p, at);
  cursor.stage_table(p, at.batch, first_tile * Cfg::bc, (first_tile + tiles) * Cfg::bc,
                     reinterpret_cast<int*>(smem + Cfg::table_offset));
#pragma unroll
  for (int stage = 0; stage < Cfg::stages - 1; ++stage) {
    if (stage < tiles) {
      const int first = (first_tile + stage) * Cfg::bc;
      cursor.fetch(p, at.batch, first);
      cursor.resolve(p, at.kv_head);
      load_kv_tile(k_tiles + stage * Cfg::kv_tile_bytes, p.k, cursor, p, at, first);
      load_kv_tile(v_tiles + stage * Cfg::kv_tile_bytes, p.v, cursor, p, at, first);
    }
    commit_async_copies();
  }
  cursor.fetch(p, at.batch, min(first_tile + Cfg::stages - 1, total_tiles - 1) * Cfg::bc);

  // The last key each of this lane's two accumulator rows sees.
  const int warp_row0 = at.first_row + 16 * row_warp;
  int limit[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = warp_row0 + lane_row + 8 * h;
    limit[h] = p.causal ? (r < p.group_rows ? r % p.q_len : 0) + p.kv_len - p.q_len : p.kv_len - 1;
  }
  const bool warp_has_rows = warp_row0 < p.group_rows;

  float o_acc[1][Cfg::o_tiles][4];
  fa2::zero_accumulators(o_acc);
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};
  std::uint32_t q_frag[Cfg::qk_steps][4];
  const std::uint32_t q_lane = fa2::x4_lane_part<Cfg, true>(16 * row_warp, lane);
  const std::uint32_t k_lane = fa2::x4_lane_part<Cfg, false>(Cfg::keys_per_warp * key_warp, lane);
  const std::uint32_t v_lane = fa2::x4_lane_part<Cfg, true>(Cfg::keys_per_warp * key_warp, lane);

  for (int tile = 0; tile < tiles; ++tile) {
    wait_async_copies<Cfg::stages - 2>();
    __syncthreads();
    {
      const int next = tile + Cfg::stages - 1;
      if (next < tiles) {
        const std::uint32_t offset = (next % Cfg::stages) * Cfg::kv_tile_bytes;
        const int first = (first_tile + next) * Cfg::bc;
        cursor.resolve(p, at.kv_head);
        load_kv_tile(k_tiles + offset, p.k, cursor, p, at, first);
        load_kv_tile(v_tiles + offset, p.v, cursor, p, at, first);
        if (next + 1 < tiles) cursor.fetch(p, at.batch, first + Cfg::bc);
      }
      commit_async_copies();
    }
    if (tile == 0) {
#pragma unroll
      for (int step = 0; step < Cfg::qk_steps; ++step) {
        fa2::ldmatrix_x4(q_frag[step], fa2::x4_address<Cfg>(q_tile, q_lane, 0, step));
      }
    }
    if (!warp_has_rows) continue;
    const int c0 = (first_tile + tile) * Cfg::bc + Cfg::keys_per_warp * key_warp;
    const std::uint32_t k_tile = k_tiles + (tile % Cfg::stages) * Cfg::kv_tile_bytes;
    const std::uint32_t v_tile = v_tiles + (tile % Cfg::stages) * Cfg::kv_tile_bytes;

    float s[1][Cfg::s_tiles][4];
    fa2::zero_accumulators(s);
#pragma unroll
    for (int step = 0; step < Cfg::qk_steps; ++step) {
#pragma unroll
      for (int pair = 0; pair < Cfg::s_tiles / 2; ++pair) {
        std::uint32_t b[4];
        fa2::ldmatrix_x4(b, fa2::x4_address<Cfg>(k_tile, k_lane, 16 * pair, step));
        fa2::mma_16x8x16<T>(s[0][2 * pair], q_frag[step], b[0], b[1]);
        fa2::mma_16x8x16<T>(s[0][2 * pair + 1], q_frag[step], b[2], b[3]);
      }
    }
    // Masks only the slices that reach past kv_len or a row's causal limit.
    if (c0 + Cfg::keys_per_warp - 1 > min(limit[0], limit[1])) {
#pragma unroll
      for (int nt = 0; nt < Cfg::s_tiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (c0 + 8 * nt + 2 * quad + (e % 2) > limit[e / 2]) s[0][nt][e] = -INFINITY;
        }
      }
    }
    float max_scaled[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float block_max = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < Cfg::s_tiles; ++nt) {
        block_max = fmaxf(block_max, fmaxf(s[0][nt][2 * h], s[0][nt][2 * h + 1]));
      }
      const RowMaxStep moved = row_max_step(row_max[h], fa2::quad_max(block_max), p.scale_log2,
                                            [](float e) { return fa2::exp2_approx(e); });
      max_scaled[h] = moved.base;
      row_max[h] = moved.max;
      row_sum[h] *= moved.rescale;
#pragma unroll
      for (int nt = 0; nt < Cfg::o_tiles; ++nt) {
        o_acc[0][nt][2 * h] *= moved.rescale;
        o_acc[0][nt][2 * h + 1] *= moved.rescale;
      }
    }
#pragma unroll
    for (int step = 0; step < Cfg::pv_steps; ++step) {
      std::uint32_t a[4];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float(&t)[4] = s[0][2 * step + half];
        fa2::exponentiate(t, max_scaled, p.scale_log2, row_sum);
        a[2 * half] = fa2::pack_pair<T>(t[0], t[1]);
        a[2 * half + 1] = fa2::pack_pair<T>(t[2], t[3]);
      }
#pragma unroll
      for (int pair = 0; pair < Cfg::o_tiles / 2; ++pair) {
        std::uint32_t b[4];
        fa2::ldmatrix_x4_trans(b, fa2::x4_address<Cfg>(v_tile, v_lane, 16 * step, pair));
        fa2::mma_16x8x16<T>(o_acc[0][2 * pair], a, b[0], b[1]);
        fa2::mma_16x8x16<T>(o_acc[0][2 * pair + 1], a, b[2], b[3]);
      }
    }
  }

  // The key warps of each row block combined through shared memory (the K/V
  // ring is free once every warp is past its last tile).
  wait_async_copies<0>();
  __syncthreads();
  float* const combine = reinterpret_cast<float*>(smem + Cfg::q_bytes);
  float* const warp_o = combine + warp * 16 * Cfg::head_dim;    // [16][d], unnormalized
  float* const ml = combine + Cfg::warps * 16 * Cfg::head_dim;  // per warp: m[16], l[16]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float total = row_sum[h];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    const int row = lane_row + 8 * h;
    if (quad == 0) {
      ml[warp * 32 + row] = row_max[h] == -INFINITY ? -INFINITY : row_max[h] * p.scale_log2;
      ml[warp * 32 + 16 + row] = total;
    }
#pragma unroll
    for (int nt = 0; nt < Cfg::o_tiles; ++nt) {
      *reinterpret_cast<float2*>(warp_o + row * Cfg::head_dim + 8 * nt + 2 * quad) =
          make_float2(o_acc[0][nt][2 * h], o_acc[0][nt][2 * h + 1]);
    }
  }
  __syncthreads();

  const std::int64_t rows_total = static_cast<std::int64_t>(gridDim.z) * p.heads * p.q_len;
  constexpr int quads_per_row = Cfg::head_dim / 4;
  for (int item = static_cast<int>(threadIdx.x); item < Cfg::rows * quads_per_row;
       item += Cfg::threads) {
    const int local = item / quads_per_row;
    const int dim = (item % quads_per_row) * 4;
    const int r = at.first_row + local;
    if (r >= p.group_rows) continue;
    const int first_warp = (local / 16) * Cfg::key_warps;
    const int in_tile = local % 16;
    float m = -INFINITY;
#pragma unroll
    for (int kw = 0; kw < Cfg::key_warps; ++kw) m = fmaxf(m, ml[(first_warp + kw) * 32 + in_tile]);
    float l = 0.f;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int kw = 0; kw < Cfg::key_warps; ++kw) {
      const int w = first_warp + kw;
      const float warp_m = ml[w * 32 + in_tile];
      const float weight = warp_m == -INFINITY ? 0.f : fa2::exp2_approx(warp_m - m);
      l += weight * ml[w * 32 + 16 + in_tile];
      const float4 part =
          *reinterpret_cast<const float4*>(combine + (w * 16 + in_tile) * Cfg::head_dim + dim);
      acc[0] += weight * part.x;
      acc[1] += weight * part.y;
      acc[2] += weight * part.z;
      acc[3] += weight * part.w;
    }
    const float inverse = l > 0.f ? 1.f / l : 0.f;
    const float lse = l > 0.f ? (m + log2f(l)) * ln_2 : -INFINITY;
    const std::int64_t out = output_row(p, at, r);
    if (p.splits == 1) {
      store_row_quad(p, out, dim, Cfg::head_dim, acc, inverse, lse);
    } else {
      *reinterpret_cast<float4*>(p.partial_o + (split * rows_total + out) * Cfg::head_dim + dim) =
          make_float4(acc[0] * inverse, acc[1] * inverse, acc[2] * inverse, acc[3] * inverse);
      if (dim == 0) p.partial_lse[split * rows_total + out] = lse;
    }
  }
  if (p.splits == 1) return;

  // The last split of this (batch, kv head, row block) to arrive combines.
  __threadfence();  // this CTA's partials are visible before its arrival is counted
  __syncthreads();
  unsigned* const arrivals =
      p.arrivals + (static_cast<std::int64_t>(at.batch) * p.kv_heads + at.kv_head) * p.row_blocks +
      row_block;
  if (threadIdx.x == 0) {
    last_split = atomicAdd(arrivals, 1u) == static_cast<unsigned>(p.splits - 1);
  }
  __syncthreads();
  if (!last_split) return;
  __threadfence();  // ... and every other split's partials are visible here
  combine_splits<T, Cfg>(p, at, rows_total);
  if (threadIdx.x == 0) *arrivals = 0;  // ready for the next launch
}

// The workspace of a launch with `splits` (none at one split): the arrival
// counters first (whole 16 bytes, for the float4 partials after them), then
// the partials. The caller zeroes it once when it allocates it for a shape;
// every launch of that shape leaves the counters zero again.
template <typename Cfg>
constexpr std::int64_t counter_words(std::int64_t batch, int heads, int kv_heads, int q_len) {
  const std::int64_t row_blocks = (heads / kv_heads * q_len + Cfg::rows - 1) / Cfg::rows;
  return (batch * kv_heads * row_blocks + 3) / 4 * 4;
}

template <typename Cfg>
constexpr std::size_t workspace_bytes(std::int64_t batch, int heads, int kv_heads, int q_len,
                                      int splits) {
  if (splits <= 1) return 0;
  const std::int64_t rows_total = batch * heads * q_len;
  return static_cast<std::size_t>(4 * (counter_words<Cfg>(batch, heads, kv_heads, q_len) +
                                       rows_total * splits * (Cfg::head_dim + 1)));
}

// Whether every row of a pool this device can hold has a 32-bit number
// (Cfg::paged_offsets_32): device memory below 2^32 rows.
template <typename Cfg>
bool rows_fit_32_bits() {
  const double memory = current_device().memory_bytes;
  return memory > 0 && memory / Cfg::row_bytes < 4294967296.0;
}

// The launch. `p` comes with every field but the split's; `splits` is
// clamped so that none is empty.
template <typename T, typename Cfg>
cudaError_t launch_decode(DecodeParams<T> p, int batch, int splits, void* workspace,
                          cudaStream_t stream) {
  p.row_blocks = (p.group_rows + Cfg::rows - 1) / Cfg::rows;
  const int total_tiles = (p.kv_len + Cfg::bc - 1) / Cfg::bc;
  p.tiles_per_split = (total_tiles + splits - 1) / splits;
  p.splits = (total_tiles + p.tiles_per_split - 1) / p.tiles_per_split;
  const std::int64_t rows_total = static_cast<std::int64_t>(batch) * p.heads * p.q_len;
  if (p.splits > 1 && workspace == nullptr) return cudaErrorInvalidValue;
  p.arrivals = static_cast<unsigned*>(workspace);
  p.partial_o =
      static_cast<float*>(workspace) + counter_words<Cfg>(batch, p.heads, p.kv_heads, p.q_len);
  p.partial_lse = p.partial_o + rows_total * Cfg::head_dim * p.splits;
  const dim3 grid(static_cast<unsigned>(p.row_blocks * p.splits), static_cast<unsigned>(p.kv_heads),
                  static_cast<unsigned>(batch));
  if (p.page_table != nullptr) {
    if ((1 << p.page_shift) < Cfg::page_tokens_min) return cudaErrorInvalidValue;
    if (Cfg::paged_offsets_32 && !rows_fit_32_bits<Cfg>()) return cudaErrorInvalidValue;
    return launch_kernel(fa2_decode_forward<T, Cfg, true>, grid, Cfg::threads, Cfg::smem_bytes,
                         stream, p);
  }
  return launch_kernel(fa2_decode_forward<T, Cfg, false>, grid, Cfg::threads, Cfg::smem_bytes,
                       stream, p);
}

}  // namespace cfr::kernels::decode
