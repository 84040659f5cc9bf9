#pragma once

// FlashAttention-2 forward on mma.sync (sm_80+), fp16 and bf16 with fp32
// accumulate. One CTA per (Q block of Br rows, head, batch); each warp owns
// 16 x row_tiles query rows for the whole pass, so S = Q K^T, the online
// softmax and P stay in registers: the m16n8k16 accumulator layout of S is the
// A-operand layout of P V once two n8 tiles are packed into one k16 step, and
// nothing goes through shared memory between the two products (fa1_wmma's
// S/P round trip is what limited it: docs/perf-notes.md).
//
// Shared memory holds the Q block and `stages` K/V tiles filled by cp.async,
// every 16-byte chunk XOR-swizzled by its row (see swizzle_key), so the eight
// rows one ldmatrix phase reads land in eight different bank groups for
// every head dim >= 32. K feeds S through plain
// ldmatrix (K row-major is the "col" B operand); V feeds P V through
// ldmatrix.trans.
//
// Causal: only the blocks that cross the diagonal (and a ragged last block)
// are masked; blocks wholly above a warp's rows are skipped by that warp; Q
// blocks run heaviest first (across the whole grid when the launch order puts
// heads before Q blocks) so that the last wave holds the short ones.
//
// The tile configuration is a template parameter so that tests/gpu can time
// variants; kernels/fa2_mma.cu instantiates the catalog's choice.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/async_copy.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/softmax_constants.hpp"

namespace cfr::kernels::fa2 {

template <int HeadDim, int Bc, int Warps, int RowTilesPerWarp, int Stages, int MinCtasPerSm,
          bool ExpsBeforePv = false,
          // three axes, not a GridOrder: nvcc's host stub cannot spell an array argument
          GridAxis AxisX = GridAxis::q_blocks, GridAxis AxisY = GridAxis::heads,
          GridAxis AxisZ = GridAxis::batch,
          CausalBlockOrder CausalOrder = CausalBlockOrder::heaviest_first>
struct Fa2Config {
  static constexpr int head_dim = HeadDim;
  static constexpr int bc = Bc;
  static constexpr int warps = Warps;
  static constexpr int row_tiles = RowTilesPerWarp;  // 16-row MMA tiles per warp
  static constexpr int stages = Stages;              // K/V tiles in flight
  static constexpr int min_ctas_per_sm = MinCtasPerSm;
  // All exponentials of a block before P V, O always rescaled (FA2's order);
  // false: exponentials fused into P V step by step, O's rescale skipped when
  // no row max of the warp moved.
  static constexpr bool exps_before_pv = ExpsBeforePv;
  static constexpr GridOrder order{AxisX, AxisY, AxisZ};  // blockIdx.x's axis first
  static constexpr CausalBlockOrder causal_order = CausalOrder;

  static constexpr int rows_per_warp = 16 * row_tiles;
  static constexpr int br = warps * rows_per_warp;
  static constexpr int threads = warps * 32;
  static constexpr int row_bytes = head_dim * 2;
  static constexpr int chunks_per_row = head_dim / 8;  // 16-byte chunks
  static constexpr int q_bytes = br * row_bytes;
  static constexpr int kv_tile_bytes = bc * row_bytes;
  static constexpr int k_offset = q_bytes;
  static constexpr int v_offset = k_offset + stages * kv_tile_bytes;
  static constexpr int smem_bytes = v_offset + stages * kv_tile_bytes;

  static constexpr int qk_steps = head_dim / 16;  // k16 steps of S = Q K^T
  static constexpr int s_tiles = bc / 8;          // n8 tiles of S per row tile
  static constexpr int pv_steps = bc / 16;        // k16 steps of O += P V
  static constexpr int o_tiles = head_dim / 8;    // n8 tiles of O per row tile
  // One warp with one row tile holds its Q fragments for the whole pass (16
  // rows x d: d / 4 registers); with two row tiles that would not fit next to
  // S and O, so Q is re-read from shared memory at each k step.
  static constexpr bool q_in_registers = row_tiles == 1;

  static_assert(head_dim % 32 == 0, "ldmatrix.x4 pairs two 16-wide steps");
  static_assert(bc % 16 == 0 && stages >= 2);
  static_assert(q_bytes % 1024 == 0 && kv_tile_bytes % 1024 == 0,
                "tiles must start on the swizzle's 1024-byte period");
};

// ---- PTX wrappers ----------------------------------------------------------

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// d += a * b for one m16n8k16 tile, fp32 accumulate.
template <typename T>
__device__ __forceinline__ void mma_16x8x16(float (&d)[4], const std::uint32_t (&a)[4],
                                            std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>);
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two fp32 values -> one register of two T, the lower column in the low half
// (the order the A operand and a row-major store both expect).
template <typename T>
__device__ __forceinline__ std::uint32_t pack_pair(float low, float high) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 pair = __floats2half2_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  } else {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const std::uint32_t*>(&pair);
  }
}

// MUFU.EX2 directly; ex2.approx(-inf) = +0, which the masking relies on.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// ---- tiles -----------------------------------------------------------------

// Every shared-memory offset below is a lane part plus a compile-time part
// whose bits are disjoint from it (rows in distinct bit ranges, 16-byte
// chunks in distinct bits), so the sum is an XOR; the swizzle is linear over
// XOR, so swizzle(lane + fixed) = swizzle(lane) ^ swizzle(fixed): one register
// per access pattern and one LOP3 per access, where a generic swizzle per
// (row block, step) made the compiler keep dozens of addresses live.
//
// The XOR key is the row's index among eight consecutive rows of 128 bytes
// or more (d >= 64), or the index of its 128-byte line when two 64-byte rows
// share one (d = 32). Keying on the line index for 256-byte rows (d = 128)
// would give rows r and r + 4 the same key: ncu counted 2-way bank conflicts
// on every ldmatrix (8 wavefronts per x4 instead of 4).
__host__ __device__ constexpr std::uint32_t swizzle_key(int row, int row_bytes) {
  return static_cast<std::uint32_t>(row_bytes >= 128 ? row : row * row_bytes / 128) & 7u;
}

__host__ __device__ constexpr std::uint32_t swizzled(int row, int chunk, int row_bytes) {
  const auto offset = static_cast<std::uint32_t>(row * row_bytes + chunk * 16);
  return offset ^ (swizzle_key(row, row_bytes) << 4);
}

// Rows [first_row, first_row + rows) of one head's [seq_len, d] matrix into a
// swizzled tile; rows at or past seq_len are zero-filled (their scores are
// masked, their V rows meet P = 0).
template <typename T, typename Cfg, int rows>
__device__ __forceinline__ void load_tile(std::uint32_t tile, const T* __restrict__ head,
                                          int first_row, int seq_len) {
  constexpr int rows_per_pass = Cfg::threads / Cfg::chunks_per_row;
  static_assert(Cfg::threads % Cfg::chunks_per_row == 0);
  static_assert(swizzle_key(rows_per_pass, Cfg::row_bytes) == 0, "a pass must keep the key");
  const int thread_row = static_cast<int>(threadIdx.x) / Cfg::chunks_per_row;
  const int column = static_cast<int>(threadIdx.x) % Cfg::chunks_per_row;
  const std::uint32_t lane_offset = swizzled(thread_row, column, Cfg::row_bytes);
  const T* src =
      head + static_cast<std::int64_t>(first_row + thread_row) * Cfg::head_dim + column * 8;
#pragma unroll
  for (int pass = 0; pass < (rows + rows_per_pass - 1) / rows_per_pass; ++pass) {
    const int row = thread_row + pass * rows_per_pass;
    if (rows % rows_per_pass != 0 && row >= rows) break;
    const bool valid = first_row + row < seq_len;
    copy_16_bytes_async_shared(
        tile + (lane_offset ^ swizzled(pass * rows_per_pass, 0, Cfg::row_bytes)),
        valid ? src + static_cast<std::int64_t>(pass) * rows_per_pass * Cfg::head_dim : head,
        valid);
  }
}

// The lane part of an x4 ldmatrix over a 16 x 16 block: lanes 0-7 address
// rows 0-7 / columns 0-7; then rows 8-15 (rows_first) or columns 8-15; then
// the other half. The block's own position comes from fixed_part.
template <typename Cfg, bool rows_first>
__device__ __forceinline__ std::uint32_t x4_lane_part(int first_row, int lane) {
  const int row = first_row + (lane % 8) + (rows_first ? ((lane / 8) % 2) * 8 : (lane / 16) * 8);
  const int chunk = rows_first ? lane / 16 : (lane / 8) % 2;
  return swizzled(row, chunk, Cfg::row_bytes);
}

// The block at rows row0.. (a multiple of 16) and columns 16 * step..: the
// rows are whole 1024-byte swizzle periods (16 rows of >= 64 bytes), so they
// add; only the column step goes through the XOR. One register per step,
// the row blocks become immediate offsets of ldmatrix.
template <typename Cfg>
__device__ __forceinline__ std::uint32_t x4_address(std::uint32_t tile, std::uint32_t lane_part,
                                                    int row0, int step) {
  static_assert(16 * Cfg::row_bytes % 1024 == 0);
  return tile + static_cast<std::uint32_t>(row0 * Cfg::row_bytes) +
         (lane_part ^ swizzled(0, 2 * step, Cfg::row_bytes));
}

// Folds values[0, 2 * width) onto values[0, width), pairwise: a tree, so
// the comparisons of one level overlap.
template <int width, int count>
__device__ __forceinline__ float max_tree(float (&values)[count]) {
  if constexpr (width == 0) {
    return values[0];
  } else {
#pragma unroll
    for (int i = 0; i < width; ++i) values[i] = fmaxf(values[i], values[i + width]);
    return max_tree<width / 2>(values);
  }
}

template <int row_tiles, int tiles>
__device__ __forceinline__ void zero_accumulators(float (&accumulators)[row_tiles][tiles][4]) {
#pragma unroll
  for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < tiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) accumulators[mt][nt][e] = 0.f;
    }
  }
}

// The max of one accumulator row half (h = 0: row group, 1: row group + 8)
// over this lane's columns.
template <typename Cfg>
__device__ __forceinline__ float row_max_of(const float (&s)[Cfg::s_tiles][4], int h) {
  static_assert((Cfg::s_tiles & (Cfg::s_tiles - 1)) == 0, "the tree halves s_tiles");
  float partial[Cfg::s_tiles];
#pragma unroll
  for (int nt = 0; nt < Cfg::s_tiles; ++nt) partial[nt] = fmaxf(s[nt][2 * h], s[nt][2 * h + 1]);
  return max_tree<Cfg::s_tiles / 2>(partial);
}

// p = 2^(s * scale_log2 - max_scaled) for one accumulator tile (rows group
// and group + 8), added to this lane's row sums.
__device__ __forceinline__ void exponentiate(float (&tile)[4], const float (&max_scaled)[2],
                                             float scale_log2, float (&row_sum)[2]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) tile[e] = exp2_approx(fmaf(tile[e], scale_log2, -max_scaled[e / 2]));
  row_sum[0] += tile[0] + tile[1];
  row_sum[1] += tile[2] + tile[3];
}

// The max over the four lanes (a quad) that hold one accumulator row.
__device__ __forceinline__ float quad_max(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 2));
}

// ---- the kernel ------------------------------------------------------------

template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_ctas_per_sm)
    fa2_mma_forward(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                    T* __restrict__ o, float* __restrict__ lse, int q_len, int kv_len,
                    int heads_per_kv_head, bool causal, float scale_log2) {
  constexpr int row_tiles = Cfg::row_tiles;
  extern __shared__ __align__(1024) unsigned char smem[];
  const auto smem_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t q_tile = smem_base;
  const std::uint32_t k_tiles = smem_base + Cfg::k_offset;
  const std::uint32_t v_tiles = smem_base + Cfg::v_offset;

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4;  // the accumulator row within an 8-row half
  const int quad = lane % 4;   // the accumulator column pair

  // Heaviest causal Q blocks first: the last wave then holds the short ones.
  const GridPosition at = grid_position<Cfg::order, GridAxis::q_blocks>();
  const int q_blocks = (q_len + Cfg::br - 1) / Cfg::br;
  const bool reversed = causal && Cfg::causal_order == CausalBlockOrder::heaviest_first;
  const int q_block = reversed ? q_blocks - 1 - at.block : at.block;
  const int q0 = q_block * Cfg::br;
  const std::int64_t head = at.head;
  const std::int64_t head_offset = head * q_len * Cfg::head_dim;
  // The kv head of this query head: GQA gives each kv head heads_per_kv_head
  // consecutive query heads, so (batch * heads + h) / heads_per_kv_head is
  // batch * kv_heads + h's kv head.
  const std::int64_t kv_offset = head / heads_per_kv_head * kv_len * Cfg::head_dim;
  const T* k_head = k + kv_offset;
  const T* v_head = v + kv_offset;
  // Causal is bottom-right aligned: query row i sees keys up to i + shift.
  const int shift = kv_len - q_len;

  const int warp_row0 = warp * Cfg::rows_per_warp;  // within the Q block
  const int warp_first = q0 + warp_row0;
  const int warp_last = warp_first + Cfg::rows_per_warp - 1;
  const int last_row = min(q_len, q0 + Cfg::br) - 1;
  const int all_kv_blocks = (kv_len + Cfg::bc - 1) / Cfg::bc;
  const int kv_blocks =
      causal ? min(all_kv_blocks, (last_row + shift) / Cfg::bc + 1) : all_kv_blocks;

  load_tile<T, Cfg, Cfg::br>(q_tile, q + head_offset, q0, q_len);
#pragma unroll
  for (int stage = 0; stage < Cfg::stages - 1; ++stage) {
    if (stage < kv_blocks) {
      load_tile<T, Cfg, Cfg::bc>(k_tiles + stage * Cfg::kv_tile_bytes, k_head, stage * Cfg::bc,
                                 kv_len);
      load_tile<T, Cfg, Cfg::bc>(v_tiles + stage * Cfg::kv_tile_bytes, v_head, stage * Cfg::bc,
                                 kv_len);
    }
    commit_async_copies();
  }

  float o_acc[row_tiles][Cfg::o_tiles][4];
  float row_max[row_tiles][2];  // raw scores; rows group and group + 8
  float row_sum[row_tiles][2];  // this lane's share of l
  float rescale_of[row_tiles][2];
  zero_accumulators(o_acc);
#pragma unroll
  for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row_max[mt][h] = -INFINITY;
      row_sum[mt][h] = 0.f;
    }
  }
  std::uint32_t q_frag[Cfg::q_in_registers ? Cfg::qk_steps : 1][4];
  const std::uint32_t q_lane = x4_lane_part<Cfg, true>(warp_row0, lane);
  const std::uint32_t k_lane = x4_lane_part<Cfg, false>(0, lane);
  const std::uint32_t v_lane = x4_lane_part<Cfg, true>(0, lane);

  for (int block = 0; block < kv_blocks; ++block) {
    wait_async_copies<Cfg::stages - 2>();  // this block's K and V (and Q) have landed
    __syncthreads();                       // ... for every thread, and the stage below is free
    {
      const int next = block + Cfg::stages - 1;
      if (next < kv_blocks) {
        const std::uint32_t offset = (next % Cfg::stages) * Cfg::kv_tile_bytes;
        load_tile<T, Cfg, Cfg::bc>(k_tiles + offset, k_head, next * Cfg::bc, kv_len);
        load_tile<T, Cfg, Cfg::bc>(v_tiles + offset, v_head, next * Cfg::bc, kv_len);
      }
      commit_async_copies();  // possibly empty: keeps the group count per block fixed
    }
    if constexpr (Cfg::q_in_registers) {
      if (block == 0) {
#pragma unroll
        for (int step = 0; step < Cfg::qk_steps; ++step) {
          ldmatrix_x4(q_frag[step], x4_address<Cfg>(q_tile, q_lane, 0, step));
        }
      }
    }
    const int c0 = block * Cfg::bc;
    // Rows past q_len, or (causal) all above this block's first key, add nothing.
    if (warp_first >= q_len || (causal && warp_last + shift < c0)) continue;

    const std::uint32_t k_tile = k_tiles + (block % Cfg::stages) * Cfg::kv_tile_bytes;
    const std::uint32_t v_tile = v_tiles + (block % Cfg::stages) * Cfg::kv_tile_bytes;

    // S = Q K^T.
    float s[row_tiles][Cfg::s_tiles][4];
    zero_accumulators(s);
#pragma unroll
    for (int step = 0; step < Cfg::qk_steps; ++step) {
      std::uint32_t a[row_tiles][4];
#pragma unroll
      for (int mt = 0; mt < row_tiles; ++mt) {
        if constexpr (Cfg::q_in_registers) {
#pragma unroll
          for (int r = 0; r < 4; ++r) a[mt][r] = q_frag[step][r];
        } else {
          ldmatrix_x4(a[mt], x4_address<Cfg>(q_tile, q_lane, 16 * mt, step));
        }
      }
#pragma unroll
      for (int pair = 0; pair < Cfg::s_tiles / 2; ++pair) {
        std::uint32_t b[4];  // keys 16 * pair + 0-7 then 8-15
        ldmatrix_x4(b, x4_address<Cfg>(k_tile, k_lane, 16 * pair, step));
#pragma unroll
        for (int mt = 0; mt < row_tiles; ++mt) {
          mma_16x8x16<T>(s[mt][2 * pair], a[mt], b[0], b[1]);
          mma_16x8x16<T>(s[mt][2 * pair + 1], a[mt], b[2], b[3]);
        }
      }
    }

    // Mask only where a key can be past kv_len or right of a row's diagonal.
    if (c0 + Cfg::bc > kv_len || (causal && c0 + Cfg::bc - 1 > warp_first + shift)) {
#pragma unroll
      for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < Cfg::s_tiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = warp_first + 16 * mt + group + 8 * (e / 2);
            const int col = c0 + 8 * nt + 2 * quad + (e % 2);
            if (col >= kv_len || (causal && col > row + shift)) s[mt][nt][e] = -INFINITY;
          }
        }
      }
    }

    // Online softmax per row, log2 domain: p = 2^(s * scale_log2 - m * scale_log2),
    // one FFMA and one MUFU.EX2 per score. The maxima move by row_max_step
    // (online_softmax.cuh), the step OnlineSoftmaxRow takes too, here over
    // raw scores: OnlineSoftmaxRow's exponentials take scores already
    // multiplied by scale_log2, one FMUL more per score, so this kernel does
    // its own, with the scale folded into the FFMA. The row maxima first (a
    // tree over this lane's columns, then the quad), then O's rescale, then
    // the exponentials fused into P V so that S dies step by step.
    float max_scaled[row_tiles][2];
    bool max_moved = false;
#pragma unroll
    for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const RowMaxStep moved = row_max_step(row_max[mt][h], quad_max(row_max_of<Cfg>(s[mt], h)),
                                              scale_log2, [](float e) { return exp2_approx(e); });
        max_scaled[mt][h] = moved.base;
        max_moved = max_moved || moved.max != row_max[mt][h];
        row_max[mt][h] = moved.max;
        row_sum[mt][h] *= moved.rescale;
        rescale_of[mt][h] = moved.rescale;
      }
    }
    if constexpr (Cfg::exps_before_pv) {
#pragma unroll
      for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < Cfg::s_tiles; ++nt)
          exponentiate(s[mt][nt], max_scaled[mt], scale_log2, row_sum[mt]);
      }
    }
    // Once the maxima settle, most blocks leave every row's max where it was:
    // the rescale is then exactly 1 for the whole warp and is skipped.
    if (Cfg::exps_before_pv || __any_sync(0xffffffffu, max_moved)) {
#pragma unroll
      for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
        for (int nt = 0; nt < Cfg::o_tiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) o_acc[mt][nt][e] *= rescale_of[mt][e / 2];
        }
      }
    }

    // O += P V, P straight from the S accumulators: two n8 tiles of S are one
    // k16 A operand.
#pragma unroll
    for (int step = 0; step < Cfg::pv_steps; ++step) {
      std::uint32_t p[row_tiles][4];
#pragma unroll
      for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          float(&tile)[4] = s[mt][2 * step + half];
          if constexpr (!Cfg::exps_before_pv) {
            exponentiate(tile, max_scaled[mt], scale_log2, row_sum[mt]);
          }
          p[mt][2 * half] = pack_pair<T>(tile[0], tile[1]);
          p[mt][2 * half + 1] = pack_pair<T>(tile[2], tile[3]);
        }
      }
#pragma unroll
      for (int pair = 0; pair < Cfg::o_tiles / 2; ++pair) {
        std::uint32_t b[4];  // dims 16 * pair + 0-7 then 8-15
        ldmatrix_x4_trans(b, x4_address<Cfg>(v_tile, v_lane, 16 * step, pair));
#pragma unroll
        for (int mt = 0; mt < row_tiles; ++mt) {
          mma_16x8x16<T>(o_acc[mt][2 * pair], p[mt], b[0], b[1]);
          mma_16x8x16<T>(o_acc[mt][2 * pair + 1], p[mt], b[2], b[3]);
        }
      }
    }
  }

  // Epilogue: O / l through this warp's own Q rows in shared memory (no other
  // warp reads them), then 16-byte coalesced stores; LSE in natural log.
  if (warp_first >= q_len) return;
  __syncwarp();  // every lane's last ldmatrix of these Q rows precedes the first store over them
#pragma unroll
  for (int mt = 0; mt < row_tiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float total = row_sum[mt][h];
      total += __shfl_xor_sync(0xffffffffu, total, 1);
      total += __shfl_xor_sync(0xffffffffu, total, 2);
      const float inverse = 1.f / total;  // total >= 1: the row max contributes 2^0
      const int local_row = warp_row0 + 16 * mt + group + 8 * h;
      if (quad == 0 && q0 + local_row < q_len) {
        lse[head * q_len + q0 + local_row] = natural_lse(row_max[mt][h] * scale_log2, total);
      }
#pragma unroll
      for (int nt = 0; nt < Cfg::o_tiles; ++nt) {
        const std::uint32_t packed =
            pack_pair<T>(o_acc[mt][nt][2 * h] * inverse, o_acc[mt][nt][2 * h + 1] * inverse);
        const std::uint32_t address =
            q_tile + (swizzled(local_row, nt, Cfg::row_bytes) | (quad * 4));
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(packed) : "memory");
      }
    }
  }
  __syncwarp();
  constexpr int warp_chunks = Cfg::rows_per_warp * Cfg::chunks_per_row;
#pragma unroll
  for (int chunk = lane; chunk < warp_chunks; chunk += 32) {
    const int local_row = warp_row0 + chunk / Cfg::chunks_per_row;
    const int column = chunk % Cfg::chunks_per_row;
    if (q0 + local_row >= q_len) continue;
    const std::uint32_t address = q_tile + swizzled(local_row, column, Cfg::row_bytes);
    uint4 value;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(value.x), "=r"(value.y), "=r"(value.z), "=r"(value.w)
                 : "r"(address));
    *reinterpret_cast<uint4*>(
        o + head_offset + static_cast<std::int64_t>(q0 + local_row) * Cfg::head_dim + column * 8) =
        value;
  }
}

// Launches one configuration; the caller has checked shapes and pointers.
template <typename T, typename Cfg>
cudaError_t launch_fa2_mma_config(const AttentionShape& shape, const T* q, const T* k, const T* v,
                                  T* o, float* lse, float scale_log2, cudaStream_t stream) {
  if (!(scale_log2 > 0.f)) return cudaErrorInvalidValue;  // the raw-score row max needs scale > 0
  return launch_tiled(fa2_mma_forward<T, Cfg>, Cfg::order, shape, TileShape{Cfg::br, Cfg::bc},
                      Cfg::threads, Cfg::smem_bytes, stream, q, k, v, o, lse, shape.seq_len,
                      shape.keys(), shape.heads / shape.key_heads(), shape.causal, scale_log2);
}

}  // namespace cfr::kernels::fa2
