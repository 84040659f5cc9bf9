#pragma once

// FlashAttention-2 backward on mma.sync (sm_80+), fp16 and bf16 with fp32
// accumulate, in three launches (the catalog's fa2_backward_launches):
//   (a) a pre-pass per Q block: D = rowsum(dO * O) into the workspace, and
//       the block's rows of the fp32 dQ accumulator set to zero;
//   (b) one CTA per K/V block of Bc rows, each warp owning 16 of them: K and
//       V stay in shared memory while the Q blocks of Br rows that see the
//       block stream through a cp.async double buffer (Q, dO, and their LSE
//       and D). Per Q block each warp recomputes S^T = K Q^T for its keys,
//       P^T = 2^(S^T * scale * log2(e) - LSE * log2(e)) from the forward's
//       natural-log LSE, dP^T = V dO^T and dS^T = P^T * (dP^T - D), all in
//       registers: the accumulator layout of S^T is the A-operand layout of
//       P^T dO and dS^T Q, so dV and dK accumulate in fp32 registers with no
//       shared-memory round trip (the forward's P V trick, transposed). dS^T
//       goes to shared memory once, and the warps, now split over the Q
//       block's rows and d, add dQ += dS K to the fp32 accumulator with
//       atomics (RED in L2);
//   (c) dQ = scale * accumulator in the output dtype.
// Why atomics and not a separate dQ pass (FA1's, fa1_bwd's): a dQ pass per
// Q block must recompute S and dP, two of the five matmuls again (7 instead
// of 5, 1.4x the tensor work), where the atomics cost an fp32 read-modify-
// write of Br x d per (K/V block, Q block) in L2, which the tensor work
// hides when each K/V block is 128 rows. The price is a nondeterministic
// summation order of dQ (fp32, so within the checks' tolerance).
//
// Every matmul is m16n8k16 with fp32 accumulate; operands come through
// ldmatrix from swizzled tiles (fa2_mma.cuh's helpers and swizzle): K, V as
// A operands and Q, dO as "col" B operands of S^T and dP^T with plain
// ldmatrix; dO and Q as k-major B operands of dV and dK, and K of dQ, with
// ldmatrix.trans; dS (stored as dS^T) as the A operand of dQ with
// ldmatrix.trans.
//
// Causal (bottom-right aligned, square here): a CTA starts at the first Q
// block whose last row sees its first key, and masks only where a warp's keys
// can be right of a row's diagonal or past the ends (ragged blocks).
//
// GQA (kv_heads dividing heads, as many keys as queries): the main launch has
// one CTA per K/V block of a K/V head (grid heads B x Hkv), and its stream is
// the Q blocks of every query head of the group, Q block by Q block from the
// last one down and the group's G heads within each (step s: Q block
// Tr - 1 - s / G of head s % G), so dK and dV sum over the group in the same
// registers and are written once, with no atomics; dQ goes to each query
// head's accumulator as without GQA. Down, because causal CTAs of a K/V head
// skip different numbers of Q blocks: started together they then read each
// shared Q tile in step, where from the first block up CTA 0 would read a
// tile 2G j steps after CTA j (Bc = 2 Br), G times the L2 reach square
// attention needs (the L2-aware model's figures: docs/model.md section 2.4).
// The pre-pass and the convert stay per query head. Square self-attention
// (G = 1) runs its own instantiation (grouped = false), whose stream is the
// Q blocks of its one head from the first.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "kernels/async_copy.cuh"
#include "kernels/current_device.hpp"
#include "kernels/element_type.cuh"
#include "kernels/fa2_mma.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/softmax_constants.hpp"

namespace cfr::kernels::fa2_bwd {

using fa2::exp2_approx;
using fa2::ldmatrix_x4;
using fa2::ldmatrix_x4_trans;
using fa2::mma_16x8x16;
using fa2::pack_pair;
using fa2::swizzled;
using fa2::x4_address;
using fa2::x4_lane_part;

// The swizzled layout of a tile whose rows are `RowBytes` long (the helpers
// of fa2_mma.cuh read only row_bytes of their Cfg).
template <int RowBytes>
struct RowLayout {
  static constexpr int row_bytes = RowBytes;
};

// The tuning knobs past the tiles (tests/gpu/fa2bwd_variants.cu times them
// one against another; docs/perf-notes.md says which won and why):
//   vector_atomics: dQ's two adjacent columns of a thread in one 8-byte
//     atomic on sm_90 (red.global.add.v2.f32), which fills each 32-byte
//     sector a warp's atomic touches instead of half of it;
//   split_accumulate: dV's k16 steps all before dK's, so P^T dies before dK
//     starts rather than step by step beside dS^T;
//   d_step_unroll: how far the k16 steps of S^T and dP^T (and, in
//     fa2_backward_2d.cuh, of dV and dK) unroll (0: fully), which bounds how
//     many fragments the compiler loads ahead;
//   mask_per_entry: the version measured before the mask went under one
//     branch (a branch per entry of P^T, beside its exponential), kept to
//     time the two in one session.
//   dq_before_dk (fa2_bwd_2d only): dQ = dS K and its atomics between dV and
//     dK, as FlashAttention-2 orders them, so the atomics drain while dK's
//     MMAs issue instead of in front of the next block's barrier; with
//     split_kv, dQ before the warp's one product (dV or dK) instead of after.
//   fragment_dq (fa2_bwd_2d only, sm_90): a whole Q block's dQ accumulator
//     is kept in the order of the warps' MMA fragments, not row-major, so
//     that one four-wide atomic of a warp adds 512 contiguous bytes (a
//     row-major pair of a warp touches 8 rows, 8 lines); the convert pass
//     reads it back in that order. FlashAttention-2 keeps its dQ accumulator
//     so (Nsight Compute: no lg_throttle on its atomics, 7 % of ours' stalls
//     at d 128). The last Q block of a ragged length stays row-major.
//   late_stat: the next block's LSE or D is loaded without a branch (from a
//     clamped row) and scaled and range-checked only where finish() stores
//     it, so no warp waits for the load at its issue (Nsight Compute: the
//     multiply beside the load held warps 0-3 a DRAM latency every block,
//     and the others then at the next barrier).
//   async_stats (fa2_bwd_2d only): a block's LSE and D reach its stage by
//     cp.async with its Q and dO tiles, unscaled (the LSE is scaled by log2 e
//     where it is read), so no thread holds a load in a register across
//     the block (the stall late_stat was after).
//   barrier_clock (fa2_bwd_2d only; measuring, never registered): each warp
//     counts the SM cycles it spends in each part of a Q block and waiting
//     at each barrier, into warp_clocks_out (fa2_backward_2d.cuh), so the
//     variant tool can say which warps wait and for what (Nsight Compute's
//     stall samples are not split by warp).
//   dp_first (fa2_bwd_2d only): dP = dO V^T's MMAs issued right after S's,
//     before P's exponentials, so that the exponentials (MUFU) and the
//     mask can overlap dP's MMAs: P's shared-memory stores and dP's
//     ldmatrix are both volatile asm, which ptxas keeps in order, so with P
//     stored first every exponential had to finish before dP's first load
//     (barrier_clock: the scores take 2000-2200 of a Q block's 4870 cycles
//     at d 64).
//   resident_k (fa2_bwd_2d only): each warp loads its keys' B fragments of
//     S = Q K^T once, when K's tile arrives, and keeps them in registers for
//     every Q block (32 registers at d 64: the CTA's K does not change over
//     the stream), so S reads only Q from shared memory: 32 of the 400 KB a
//     d 64 Q block moves through it (docs/perf-notes.md, "fa2_bwd_2d
//     revision 5").
//   split_kv (fa2_bwd_2d only): the first half of the warps accumulate dV
//     over the whole [Bc, d] block and the second half dK, each product
//     tiled over half the warps, instead of every warp both over a block of
//     half the size: twice the MMAs per fragment loaded (d 64: 48 of the 64
//     KB each product reads from shared memory a Q block), the same
//     accumulator registers a thread, and one instruction stream, the warp's
//     half choosing only the operands' addresses.
//   dq_on_dv_warps (fa2_bwd_2d only, with split_kv): dV on the second half
//     of the warps and dK on the first, and dQ = dS K only on the dV half,
//     [Br, d] over 4 warps of 8 (32 x 32 a warp at d 64 where 8 warps take
//     32 x 16): by revision 3's clocks warps 4-7 finish S, P, dP and dS
//     500-700 cycles of a d 64 block before warps 0-3 (which also load the
//     next block's LSE and D), so they take the work warps 0-3 wait
//     behind, and dQ reads 64 KB of shared memory a block instead of 96.
//   row_limit_mask (fa2_bwd_2d only): the masked branch gives each of a
//     thread's rows one key limit (kv_len, the diagonal's, none past q_len)
//     and each entry one compare with it, not mask_entry's three: the CTA
//     of a ragged last K/V block masks every Q block of its stream, and at
//     d 64 that kept it about 1.4 times as long as the others. At d 128 the
//     same branch took 3.5-5.0 % more time on whole blocks on an H100
//     (docs/perf-notes.md, "fa2_bwd_2d revision 9").
struct BwdTuning {
  bool vector_atomics = false;
  bool split_accumulate = false;
  int d_step_unroll = 0;
  bool mask_per_entry = false;
  bool dq_before_dk = false;
  bool fragment_dq = false;
  bool late_stat = false;
  bool async_stats = false;
  bool barrier_clock = false;
  bool dp_first = false;
  bool resident_k = false;
  bool split_kv = false;
  bool dq_on_dv_warps = false;
  bool row_limit_mask = false;
};

template <int HeadDim, int Br, int Bc, int Warps, int MinCtasPerSm, BwdTuning Tuning = BwdTuning{}>
struct BwdConfig {
  static constexpr BwdTuning tuning = Tuning;
  static constexpr int head_dim = HeadDim;
  static constexpr int br = Br;  // Q rows per streamed block
  static constexpr int bc = Bc;  // K/V rows per CTA, 16 per warp
  static constexpr int warps = Warps;
  static constexpr int threads = warps * 32;
  static constexpr int min_ctas_per_sm = MinCtasPerSm;
  static constexpr int stages = 2;  // Q/dO blocks in flight
  // The catalog's launch orders (fa2_backward_launches): the same for every config.
  static constexpr GridOrder prepass_order = fa2_backward_kernel.launches[0].order;
  static constexpr GridLaunch main_launch = fa2_backward_kernel.launches[1];
  static constexpr GridOrder main_order = main_launch.order;
  static constexpr GridOrder main_causal_order = grid_order_for(main_launch, true);
  static constexpr GridOrder convert_order = fa2_backward_kernel.launches[2].order;

  // What fa2::load_tile reads of a config.
  static constexpr int row_bytes = head_dim * 2;
  static constexpr int chunks_per_row = head_dim / 8;  // 16-byte chunks

  static constexpr int kv_tile_bytes = bc * row_bytes;
  static constexpr int q_tile_bytes = br * row_bytes;
  using DsLayout = RowLayout<br * 2>;  // dS^T: [bc][br] elements
  static constexpr int ds_bytes = bc * DsLayout::row_bytes;
  static constexpr int k_offset = 0;
  static constexpr int v_offset = k_offset + kv_tile_bytes;
  static constexpr int q_offset = v_offset + kv_tile_bytes;
  static constexpr int do_offset = q_offset + stages * q_tile_bytes;
  static constexpr int ds_offset = do_offset + stages * q_tile_bytes;
  // LSE (times log2(e)) and D of each stage's Br rows, fp32.
  static constexpr int stats_offset = ds_offset + ds_bytes;
  static constexpr int smem_bytes = stats_offset + 2 * stages * br * 4;

  static constexpr int d_steps = head_dim / 16;  // k16 steps of S^T and dP^T
  static constexpr int q_tiles = br / 8;         // n8 tiles of S^T per warp
  static constexpr int q_steps = br / 16;        // k16 steps of dV and dK
  static constexpr int d_tiles = head_dim / 8;   // n8 tiles of dK and dV
  static constexpr int kv_steps = bc / 16;       // k16 steps of dQ
  // dQ += dS K: warp w takes the Q block's row tile w % dq_row_tiles and the
  // part w / dq_row_tiles of d.
  static constexpr int dq_row_tiles = br / 16;
  static constexpr int dq_parts = warps / dq_row_tiles;
  static constexpr int dq_tiles = d_tiles / dq_parts;  // n8 tiles of dQ per warp

  static_assert(bc == 16 * warps, "each warp owns one 16-row tile of keys");
  static_assert(head_dim % 32 == 0, "ldmatrix.x4 pairs two 16-wide steps");
  static_assert(br % 32 == 0, "dS^T rows of 64 bytes or more keep the swizzle's period");
  static_assert(warps % dq_row_tiles == 0 && d_tiles % dq_parts == 0 && dq_tiles % 2 == 0,
                "the warps tile dQ's rows and d in pairs of n8 tiles");
  static_assert(threads >= 2 * br, "one thread per LSE and per D value of a block");
  static_assert(kv_tile_bytes % 1024 == 0 && q_tile_bytes % 1024 == 0 && ds_bytes % 1024 == 0,
                "tiles must start on the swizzle's 1024-byte period");
  static_assert(32 % chunks_per_row == 0, "a row's chunks lie in one warp (the pre-pass)");
};

// ---- (a) D and the dQ accumulator's zeros ---------------------------------

template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    fa2_backward_prepass(const T* __restrict__ o, const T* __restrict__ d_o,
                         float* __restrict__ d_rows, float* __restrict__ dq_accum, int q_len) {
  constexpr int lanes = Cfg::chunks_per_row;  // lanes per row, one 16-byte chunk each
  const GridPosition at = grid_position<Cfg::prepass_order, GridAxis::q_blocks>();
  const int q0 = at.block * Cfg::br;
  const int rows = min(Cfg::br, q_len - q0);
  const std::int64_t row0 = at.head * q_len + q0;  // over all heads
  // Whole-block passes, so every lane of a row's shuffle group takes part.
  for (int base = 0; base < Cfg::br * lanes; base += Cfg::threads) {
    const int chunk = base + static_cast<int>(threadIdx.x);
    const int row = chunk / lanes;
    const int column = (chunk % lanes) * 8;
    float sum = 0.f;
    if (row < rows) {
      const std::int64_t offset = (row0 + row) * Cfg::head_dim + column;
      float o_values[8];
      float do_values[8];
      unpack_16_bytes<T>(__ldg(reinterpret_cast<const uint4*>(o + offset)), o_values);
      unpack_16_bytes<T>(__ldg(reinterpret_cast<const uint4*>(d_o + offset)), do_values);
#pragma unroll
      for (int e = 0; e < 8; ++e) sum = fmaf(o_values[e], do_values[e], sum);
    }
#pragma unroll
    for (int offset = lanes / 2; offset > 0; offset /= 2) {
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    }
    if (row < rows && column == 0) d_rows[row0 + row] = sum;
  }
  auto* accum = reinterpret_cast<float4*>(dq_accum + row0 * Cfg::head_dim);
  for (int i = static_cast<int>(threadIdx.x); i < rows * Cfg::head_dim / 4; i += Cfg::threads) {
    accum[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

// ---- (c) dQ in the output dtype ---------------------------------------------

// `rows` row-major rows of the accumulator from `accum` into `out`, times
// `scale`, by the whole block.
template <typename T, typename Cfg>
__device__ __forceinline__ void convert_row_major(const float* __restrict__ accum,
                                                  T* __restrict__ out, int rows, float scale) {
  const auto* src = reinterpret_cast<const float4*>(accum);
  for (int chunk = static_cast<int>(threadIdx.x); chunk < rows * Cfg::chunks_per_row;
       chunk += Cfg::threads) {
    const float4 low = src[2 * chunk];
    const float4 high = src[2 * chunk + 1];
    const float values[8] = {low.x * scale,  low.y * scale,  low.z * scale,  low.w * scale,
                             high.x * scale, high.y * scale, high.z * scale, high.w * scale};
    store_converted<T, 8>(out + static_cast<std::int64_t>(chunk) * 8, values);
  }
}

template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    fa2_backward_convert_dq(const float* __restrict__ dq_accum, T* __restrict__ d_q, int q_len,
                            float scale) {
  const GridPosition at = grid_position<Cfg::convert_order, GridAxis::q_blocks>();
  const int q0 = at.block * Cfg::br;
  const int rows = min(Cfg::br, q_len - q0);
  const std::int64_t first = (at.head * q_len + q0) * Cfg::head_dim;  // element index
  convert_row_major<T, Cfg>(dq_accum + first, d_q + first, rows, scale);
}

// ---- (b) dK, dV and the dQ atomics -----------------------------------------

// The LSE (in log2 units) and D of Q rows [q0, q0 + br) into a stage: one
// value per thread of the first 2 br; rows past q_len get 0, which keeps
// their (masked) exponentials finite.
template <typename Cfg>
__device__ __forceinline__ float stat_of(const float* __restrict__ lse,
                                         const float* __restrict__ d_rows, int q0, int q_len) {
  const int t = static_cast<int>(threadIdx.x);
  if (t >= 2 * Cfg::br) return 0.f;
  const int row = q0 + t % Cfg::br;
  if (row >= q_len) return 0.f;
  return t < Cfg::br ? __ldg(lse + row) * log2_e : __ldg(d_rows + row);
}

// BwdTuning::late_stat's load: this thread's LSE (threads [0, br)) or D
// ([br, 2 br)) of a block's row, clamped into [0, q_len), unscaled; other
// threads load a row too and drop it. stat_in_stage turns it into stat_of's.
template <typename Cfg>
__device__ __forceinline__ float raw_stat_of(const float* __restrict__ lse,
                                             const float* __restrict__ d_rows, int q0, int q_len) {
  const int t = static_cast<int>(threadIdx.x);
  const int row = min(q0 + t % Cfg::br, q_len - 1);
  return __ldg((t < Cfg::br ? lse : d_rows) + row);
}
template <typename Cfg>
__device__ __forceinline__ float stat_in_stage(float raw, int q0, int q_len) {
  const int t = static_cast<int>(threadIdx.x);
  const float scaled = t < Cfg::br ? raw * log2_e : raw;
  return q0 + t % Cfg::br < q_len ? scaled : 0.f;
}

template <int tiles>
__device__ __forceinline__ void zero_tiles(float (&acc)[tiles][4]) {
#pragma unroll
  for (int nt = 0; nt < tiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.f;
  }
}

// acc = A B over d for this warp's 16 keys (A: K or V rows, plain
// ldmatrix) and the block's Br query rows (B: Q or dO rows, the "col"
// operand): S^T = K Q^T, dP^T = V dO^T.
template <typename T, typename Cfg>
__device__ __forceinline__ void keys_times_rows(float (&acc)[Cfg::q_tiles][4], std::uint32_t a_tile,
                                                std::uint32_t a_lane, int a_row0,
                                                std::uint32_t b_tile, std::uint32_t b_lane) {
  zero_tiles(acc);
  constexpr int unroll = Cfg::tuning.d_step_unroll > 0 ? Cfg::tuning.d_step_unroll : Cfg::d_steps;
#pragma unroll unroll
  for (int step = 0; step < Cfg::d_steps; ++step) {
    std::uint32_t a[4];
    ldmatrix_x4(a, x4_address<Cfg>(a_tile, a_lane, a_row0, step));
#pragma unroll
    for (int pair = 0; pair < Cfg::q_tiles / 2; ++pair) {
      std::uint32_t b[4];  // query rows 16 * pair + 0-7 then 8-15
      ldmatrix_x4(b, x4_address<Cfg>(b_tile, b_lane, 16 * pair, step));
      mma_16x8x16<T>(acc[2 * pair], a, b[0], b[1]);
      mma_16x8x16<T>(acc[2 * pair + 1], a, b[2], b[3]);
    }
  }
}

// Zeroes an entry of P whose row is past q_len, whose key is past kv_len,
// or (causal) whose key is right of the row's bottom-right aligned diagonal.
__device__ __forceinline__ void mask_entry(float& p, int key, int row, int q_len, int kv_len,
                                           bool causal, int shift) {
  if (row >= q_len || key >= kv_len || (causal && key > row + shift)) p = 0.f;
}

// mask_entry's rule as one limit a row: a row keeps exactly its keys below
// it (kv_len; causal, also up to row + shift; a row past q_len none), so a
// thread whose entries share rows compares each key once
// (BwdTuning::row_limit_mask). no_keys is below every key and far enough
// from INT_MIN that subtracting a key cannot wrap.
inline constexpr int no_keys = -(1 << 30);
__device__ __forceinline__ int key_limit(int row, int q_len, int kv_len, bool causal, int shift) {
  return row >= q_len ? no_keys : causal ? min(kv_len, row + shift + 1) : kv_len;
}

// mask_entry over this thread's entries of P^T: keys key0 and key0 + 8,
// rows row0 + 8 nt + (0, 1) of the block.
template <typename Cfg>
__device__ __forceinline__ void mask_block(float (&p)[Cfg::q_tiles][4], int key0, int row0,
                                           int q_len, int kv_len, bool causal, int shift) {
#pragma unroll
  for (int nt = 0; nt < Cfg::q_tiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      mask_entry(p[nt][e], key0 + 8 * (e / 2), row0 + 8 * nt + (e % 2), q_len, kv_len, causal,
                 shift);
    }
  }
}

// acc += A B where A (this warp's 16 keys x the block's Br query rows) is
// one k16 step of register accumulators and B is a [Br, d] tile read with
// ldmatrix.trans: dV += P^T dO, dK += dS^T Q.
template <typename T, typename Cfg>
__device__ __forceinline__ void accumulate_over_rows(float (&acc)[Cfg::d_tiles][4],
                                                     const std::uint32_t (&a)[4],
                                                     std::uint32_t b_tile, std::uint32_t b_lane,
                                                     int step) {
#pragma unroll
  for (int pair = 0; pair < Cfg::d_tiles / 2; ++pair) {
    std::uint32_t b[4];  // dims 16 * pair + 0-7 then 8-15
    ldmatrix_x4_trans(b, x4_address<Cfg>(b_tile, b_lane, 16 * step, pair));
    mma_16x8x16<T>(acc[2 * pair], a, b[0], b[1]);
    mma_16x8x16<T>(acc[2 * pair + 1], a, b[2], b[3]);
  }
}

// Two n8 accumulator tiles as one k16 A operand (fa2_mma's P V packing).
template <typename T>
__device__ __forceinline__ void pack_a(std::uint32_t (&a)[4], const float (&low)[4],
                                       const float (&high)[4]) {
  a[0] = pack_pair<T>(low[0], low[1]);
  a[1] = pack_pair<T>(low[2], low[3]);
  a[2] = pack_pair<T>(high[0], high[1]);
  a[3] = pack_pair<T>(high[2], high[3]);
}

// Rows [row0, row0 + 16) of a [kv_len, d] output from one warp's
// accumulators times `factor`: rows past kv_len are not written.
template <typename T, typename Cfg>
__device__ __forceinline__ void store_key_rows(T* __restrict__ head,
                                               const float (&acc)[Cfg::d_tiles][4], int row0,
                                               int kv_len, float factor) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + lane / 4 + 8 * h;
    if (row >= kv_len) continue;
    T* out = head + static_cast<std::int64_t>(row) * Cfg::head_dim + 2 * (lane % 4);
#pragma unroll
    for (int nt = 0; nt < Cfg::d_tiles; ++nt) {
      *reinterpret_cast<std::uint32_t*>(out + 8 * nt) =
          pack_pair<T>(acc[nt][2 * h] * factor, acc[nt][2 * h + 1] * factor);
    }
  }
}

// out[0] += x, out[1] += y in fp32 atomics (8-byte aligned: a thread's
// column pair); one vector atomic where sm_90 has it and the config asks.
template <bool vector>
__device__ __forceinline__ void add_pair(float* out, float x, float y) {
#if __CUDA_ARCH__ >= 900
  if constexpr (vector) {
    atomicAdd(reinterpret_cast<float2*>(out), make_float2(x, y));
    return;
  }
#endif
  atomicAdd(out, x);
  atomicAdd(out + 1, y);
}

// Where a main-launch CTA works: one K/V block of one head, and the Q
// blocks of that head that see it. GQA (`grouped`): one K/V block of a K/V
// head, and the Q blocks of its group's `group` query heads, which follow
// one another from q_offset and row0 (those of the group's first).
struct KvBlockWork {
  int c0;                  // the block's first key
  int shift;               // bottom-right causal: query row i sees keys up to i + shift
  int q_blocks;            // the head's Q blocks
  int first_q_block;       // causal: the first whose last row sees key c0, else 0
  std::int64_t q_offset;   // element offset of the head's [q_len, d] matrices
  std::int64_t kv_offset;  // ... and of its [kv_len, d] ones
  std::int64_t row0;       // the head's first query row (LSE, D)
};

// The main launch's block and head. Without a mask its grid is the
// catalog's order, K/V blocks fastest; causal, it walks heads fastest in
// groups (causal_grid, HeadGroups::fill_slots): blockIdx.x the head within
// its group, .y the K/V block, .z the group, batch and heads as one index
// (main_grid below builds it). Selects rather than a branch: with the
// branch ptxas spilled fa3_bwd's d 64 square kernel 100 bytes a thread
// against 52 before the causal grid and 60 with these (ptxas -v, sm_90a).
template <typename Cfg>
__device__ __forceinline__ GridPosition main_grid_position(bool causal) {
  static_assert(Cfg::main_causal_order[0] == GridAxis::heads &&
                Cfg::main_causal_order[1] == GridAxis::kv_blocks);
  static_assert(Cfg::main_order ==
                GridOrder{GridAxis::kv_blocks, GridAxis::heads, GridAxis::batch});
  const unsigned block = causal ? blockIdx.y : blockIdx.x;
  const unsigned inner = causal ? blockIdx.x : blockIdx.y;
  const unsigned stride = causal ? gridDim.x : gridDim.y;
  return {static_cast<int>(block), static_cast<std::int64_t>(blockIdx.z) * stride + inner};
}

template <typename Cfg, bool grouped = false>
__device__ __forceinline__ KvBlockWork kv_block_work(int q_len, int kv_len, bool causal,
                                                     int group = 1) {
  const GridPosition at = main_grid_position<Cfg>(causal);
  KvBlockWork work;
  work.c0 = at.block * Cfg::bc;
  work.shift = kv_len - q_len;
  work.q_blocks = (q_len + Cfg::br - 1) / Cfg::br;
  // Every CTA has such a block: c0 - shift <= q_len - 1.
  work.first_q_block = causal ? max(0, work.c0 - work.shift) / Cfg::br : 0;
  // GQA: at.head is batch x kv_heads + the K/V head, whose group's first
  // query head is batch x heads + its index x group.
  const std::int64_t q_head = grouped ? at.head * group : at.head;
  work.q_offset = q_head * q_len * Cfg::head_dim;
  work.kv_offset = at.head * kv_len * Cfg::head_dim;
  work.row0 = q_head * q_len;
  return work;
}

// The stream of Q blocks through `Cfg::stages` = 2 cp.async stages of Q, dO
// and their LSE (log2 units) and D (`stats`, [stage][LSE br, D br]).
// The kernel's parameters themselves, not the head's pointers: those cost
// registers for the whole kernel, where a parameter is re-read from the
// constant bank (fa2_bwd at d 128 spilled 8 more bytes with the head's).
// Its steps are the head's Q blocks from the first that sees the K/V block;
// GQA (`grouped`): from the last Q block down, the `group` query heads of
// the K/V head's group within each (step s: Q block q_blocks - 1 - s / group
// of the group's head s % group), steps 0 to (q_blocks - first) x group.
template <typename T, typename Cfg, bool grouped = false>
struct QBlockStream {
  std::uint32_t smem_base;
  float* stats;
  const T* q;
  const T* d_o;
  const float* lse;
  const float* d_rows;
  const KvBlockWork& work;
  int q_len;
  int group = 1;
  bool causal = false;  // which grid order the launch took (GQA's row0_of)

  __device__ int first_step() const {
    if constexpr (grouped) {
      return 0;
    } else {
      return work.first_q_block;
    }
  }
  // One past the last step: for the main loop, and begin()'s and finish()'s
  // "is there a next step".
  __device__ int steps() const {
    if constexpr (grouped) {
      return (work.q_blocks - work.first_q_block) * group;
    } else {
      return work.q_blocks;
    }
  }
  // GQA: a step's Q blocks from the last, and its head within the group.
  __device__ unsigned from_last(int step) const {
    return static_cast<unsigned>(step) / static_cast<unsigned>(group);
  }
  __device__ int block_of(int step) const {
    if constexpr (grouped) {
      return (q_len - 1) / Cfg::br - static_cast<int>(from_last(step));
    } else {
      return step;
    }
  }
  // The step's query head's first row (LSE, D) and its [q_len, d] offset.
  __device__ std::int64_t row0_of(int step) const {
    if constexpr (grouped) {
      const unsigned h = static_cast<unsigned>(step) - from_last(step) * group;
      // From blockIdx, re-read, rather than work.row0 held in registers.
      const std::int64_t kv_head = main_grid_position<Cfg>(causal).head;
      return (kv_head * group + h) * q_len;
    } else {
      return work.row0;
    }
  }
  __device__ std::int64_t q_offset_of(int step) const {
    if constexpr (grouped) {
      return row0_of(step) * Cfg::head_dim;
    } else {
      return work.q_offset;
    }
  }

  __device__ std::uint32_t q_tile(int stage) const {
    return smem_base + Cfg::q_offset + stage * Cfg::q_tile_bytes;
  }
  __device__ std::uint32_t do_tile(int stage) const {
    return smem_base + Cfg::do_offset + stage * Cfg::q_tile_bytes;
  }
  __device__ void load(int stage, int step) const {
    fa2::load_tile<T, Cfg, Cfg::br>(q_tile(stage), q + q_offset_of(step), block_of(step) * Cfg::br,
                                    q_len);
    fa2::load_tile<T, Cfg, Cfg::br>(do_tile(stage), d_o + q_offset_of(step),
                                    block_of(step) * Cfg::br, q_len);
    if constexpr (Cfg::tuning.async_stats) load_stats(stage, step);
  }
  // BwdTuning::async_stats: thread t < 2 br copies the step's LSE (t < br) or
  // D of row t % br into the stage, unscaled; rows past q_len get 0.
  __device__ void load_stats(int stage, int step) const {
    const int t = static_cast<int>(threadIdx.x);
    if (t >= 2 * Cfg::br) return;
    const int row = block_of(step) * Cfg::br + t % Cfg::br;
    const bool valid = row < q_len;
    const float* src = (t < Cfg::br ? lse : d_rows) + row0_of(step) + (valid ? row : 0);
    const auto dst =
        static_cast<std::uint32_t>(__cvta_generic_to_shared(stats + stage * 2 * Cfg::br + t));
    copy_4_bytes_async_shared(dst, src, valid);
  }
  __device__ float stat(int step) const {
    return stat_of<Cfg>(lse + row0_of(step), d_rows + row0_of(step), block_of(step) * Cfg::br,
                        q_len);
  }
  // What begin() loads of the next step: stat(step), or its raw load
  // (BwdTuning::late_stat), which finish() completes.
  __device__ float next_stat_load(int step) const {
    if constexpr (Cfg::tuning.late_stat) {
      return raw_stat_of<Cfg>(lse + row0_of(step), d_rows + row0_of(step), block_of(step) * Cfg::br,
                              q_len);
    } else {
      return stat(step);
    }
  }
  // The first step's tiles (committed with whatever was issued before) and stats.
  __device__ void start(int step) const {
    load(0, step);
    commit_async_copies();
    if constexpr (!Cfg::tuning.async_stats) {
      if (threadIdx.x < 2 * Cfg::br) stats[threadIdx.x] = stat(step);
    }
  }
  // At the top of step `step` in `stage`: its tiles and stats are there for
  // every thread, and the other stage (and whatever the previous step left in
  // shared memory) is free, so the next step's tiles start into it; returns
  // the next step's stat of this thread, which finish() stores.
  __device__ float begin(int step, int stage) const {
    wait_async_copies<0>();
    __syncthreads();
    return issue_next(step, stage);
  }
  // begin()'s work past its barrier (BwdTuning::barrier_clock times the two
  // apart).
  __device__ float issue_next(int step, int stage) const {
    float next_stat = 0.f;
    if (step + 1 < last()) {
      load(stage ^ 1, step + 1);
      if constexpr (!Cfg::tuning.async_stats) next_stat = next_stat_load(step + 1);
    }
    commit_async_copies();
    return next_stat;
  }
  // The next step's stats into the other stage: its last reader was the
  // previous step, before this step's first barrier.
  __device__ void finish(int step, int stage, float next_stat) const {
    if constexpr (Cfg::tuning.async_stats) return;  // the copies wrote the stage
    if (step + 1 < last() && threadIdx.x < 2 * Cfg::br) {
      if constexpr (Cfg::tuning.late_stat) {
        next_stat = stat_in_stage<Cfg>(next_stat, block_of(step + 1) * Cfg::br, q_len);
      }
      stats[(stage ^ 1) * 2 * Cfg::br + threadIdx.x] = next_stat;
    }
  }
  // One past the last step, as begin() and finish() count it.
  __device__ int last() const {
    if constexpr (grouped) {
      return steps();
    } else {
      return (q_len + Cfg::br - 1) / Cfg::br;
    }
  }
};

// `grouped`: GQA, heads_per_kv_head (G > 1) query heads a K/V head; square
// self-attention runs grouped = false, where heads_per_kv_head is not read.
template <typename T, typename Cfg, bool grouped>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_ctas_per_sm)
    fa2_backward_main(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                      const T* __restrict__ d_o, const float* __restrict__ lse,
                      const float* __restrict__ d_rows, float* __restrict__ dq_accum,
                      T* __restrict__ d_k, T* __restrict__ d_v, int q_len, int kv_len,
                      int heads_per_kv_head, bool causal, float scale, float scale_log2) {
  static_assert(!Cfg::tuning.async_stats, "fa2_backward_main reads its stats scaled");
  using DsLayout = typename Cfg::DsLayout;
  extern __shared__ __align__(1024) unsigned char smem[];
  const auto smem_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t k_tile = smem_base + Cfg::k_offset;
  const std::uint32_t v_tile = smem_base + Cfg::v_offset;
  const std::uint32_t ds_tile = smem_base + Cfg::ds_offset;
  float* stats = reinterpret_cast<float*>(smem + Cfg::stats_offset);  // [stage][LSE br, D br]

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4;  // the accumulator row within an 8-row half
  const int quad = lane % 4;   // the accumulator column pair

  const KvBlockWork work = kv_block_work<Cfg, grouped>(q_len, kv_len, causal, heads_per_kv_head);
  const int c0 = work.c0;
  const int shift = work.shift;
  float* dq_head = dq_accum + work.q_offset;
  const int warp_key0 = 16 * warp;  // within the K/V block
  const int warp_first_key = c0 + warp_key0;
  const QBlockStream<T, Cfg, grouped> stream{
      smem_base, stats, q, d_o, lse, d_rows, work, q_len, heads_per_kv_head, causal};

  fa2::load_tile<T, Cfg, Cfg::bc>(k_tile, k + work.kv_offset, c0, kv_len);
  fa2::load_tile<T, Cfg, Cfg::bc>(v_tile, v + work.kv_offset, c0, kv_len);
  stream.start(stream.first_step());

  float dk[Cfg::d_tiles][4];
  float dv[Cfg::d_tiles][4];
  zero_tiles(dk);
  zero_tiles(dv);
  const std::uint32_t a_lane = x4_lane_part<Cfg, true>(0, lane);         // K, V as A operands
  const std::uint32_t b_lane = x4_lane_part<Cfg, false>(0, lane);        // Q, dO as "col" B
  const std::uint32_t t_lane = x4_lane_part<Cfg, true>(0, lane);         // k-major B, .trans
  const std::uint32_t ds_lane = x4_lane_part<DsLayout, false>(0, lane);  // dS from dS^T, .trans
  const int dq_row_tile = warp % Cfg::dq_row_tiles;
  const int dq_part = warp / Cfg::dq_row_tiles;

  for (int index = stream.first_step(); index < stream.steps(); ++index) {
    const int stage = (index - stream.first_step()) % Cfg::stages;
    const float next_stat = stream.begin(index, stage);  // this block's tiles; dS^T is free

    const int q0 = stream.block_of(index) * Cfg::br;
    const std::uint32_t q_tile = stream.q_tile(stage);
    const std::uint32_t do_tile = stream.do_tile(stage);
    const float* lse_log2 = stats + stage * 2 * Cfg::br;
    const float* d_block = lse_log2 + Cfg::br;

    // P^T = 2^(S^T * scale_log2 - LSE_log2), masked only where a key of this
    // warp can be past kv_len or right of a row's diagonal, or a row past q_len.
    float p[Cfg::q_tiles][4];
    keys_times_rows<T, Cfg>(p, k_tile, a_lane, warp_key0, q_tile, b_lane);
    const bool masked = q0 + Cfg::br > q_len || warp_first_key + 16 > kv_len ||
                        (causal && warp_first_key + 15 > q0 + shift);
#pragma unroll
    for (int nt = 0; nt < Cfg::q_tiles; ++nt) {
      const float2 row_lse = *reinterpret_cast<const float2*>(lse_log2 + 8 * nt + 2 * quad);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float base = e % 2 == 0 ? row_lse.x : row_lse.y;
        p[nt][e] = exp2_approx(fmaf(p[nt][e], scale_log2, -base));
        if constexpr (Cfg::tuning.mask_per_entry) {
          if (masked)
            mask_entry(p[nt][e], warp_first_key + group + 8 * (e / 2),
                       q0 + 8 * nt + 2 * quad + (e % 2), q_len, kv_len, causal, shift);
        }
      }
    }
    // One branch around the whole mask, not one per entry: ptxas turns a
    // branch around a few instructions into predicated ones, which an unmasked
    // block then issues anyway (ncu: 23.3 of 32 lanes not predicated off at
    // d 64, about the 224 mask instructions of a warp's 795 per Q block).
    if (!Cfg::tuning.mask_per_entry && masked) {
      mask_block<Cfg>(p, warp_first_key + group, q0 + 2 * quad, q_len, kv_len, causal, shift);
    }

    // dS^T = P^T * (dP^T - D), dP^T = V dO^T.
    float ds[Cfg::q_tiles][4];
    keys_times_rows<T, Cfg>(ds, v_tile, a_lane, warp_key0, do_tile, b_lane);
#pragma unroll
    for (int nt = 0; nt < Cfg::q_tiles; ++nt) {
      const float2 row_d = *reinterpret_cast<const float2*>(d_block + 8 * nt + 2 * quad);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        ds[nt][e] = p[nt][e] * (ds[nt][e] - (e % 2 == 0 ? row_d.x : row_d.y));
      }
    }

    // dV += P^T dO, dK += dS^T Q: two n8 tiles of P^T (dS^T) are one k16 A operand.
    if constexpr (Cfg::tuning.split_accumulate) {
#pragma unroll
      for (int step = 0; step < Cfg::q_steps; ++step) {
        std::uint32_t a[4];
        pack_a<T>(a, p[2 * step], p[2 * step + 1]);
        accumulate_over_rows<T, Cfg>(dv, a, do_tile, t_lane, step);
      }
#pragma unroll
      for (int step = 0; step < Cfg::q_steps; ++step) {
        std::uint32_t a[4];
        pack_a<T>(a, ds[2 * step], ds[2 * step + 1]);
        accumulate_over_rows<T, Cfg>(dk, a, q_tile, t_lane, step);
      }
    } else {
#pragma unroll
      for (int step = 0; step < Cfg::q_steps; ++step) {
        std::uint32_t a[4];
        pack_a<T>(a, p[2 * step], p[2 * step + 1]);
        accumulate_over_rows<T, Cfg>(dv, a, do_tile, t_lane, step);
        pack_a<T>(a, ds[2 * step], ds[2 * step + 1]);
        accumulate_over_rows<T, Cfg>(dk, a, q_tile, t_lane, step);
      }
    }

    // dS^T to shared memory, rows = this warp's keys: no other warp writes them.
#pragma unroll
    for (int nt = 0; nt < Cfg::q_tiles; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const std::uint32_t packed = pack_pair<T>(ds[nt][2 * h], ds[nt][2 * h + 1]);
        const std::uint32_t address =
            ds_tile + (swizzled(warp_key0 + group + 8 * h, nt, DsLayout::row_bytes) | (quad * 4));
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(packed) : "memory");
      }
    }
    __syncthreads();  // every warp's dS^T

    // dQ += dS K for this warp's 16 rows and d / dq_parts columns; GQA: of the
    // step's query head, whose accumulator is found here rather than held
    // through the matmuls above.
    float* const dq_rows = grouped ? dq_accum + stream.q_offset_of(index) : dq_head;
    float dq[Cfg::dq_tiles][4];
    zero_tiles(dq);
#pragma unroll
    for (int step = 0; step < Cfg::kv_steps; ++step) {
      std::uint32_t a[4];  // rows 16 * dq_row_tile.., keys 16 * step..
      ldmatrix_x4_trans(a, x4_address<DsLayout>(ds_tile, ds_lane, 16 * step, dq_row_tile));
#pragma unroll
      for (int pair = 0; pair < Cfg::dq_tiles / 2; ++pair) {
        std::uint32_t b[4];
        ldmatrix_x4_trans(
            b, x4_address<Cfg>(k_tile, t_lane, 16 * step, dq_part * (Cfg::dq_tiles / 2) + pair));
        mma_16x8x16<T>(dq[2 * pair], a, b[0], b[1]);
        mma_16x8x16<T>(dq[2 * pair + 1], a, b[2], b[3]);
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = q0 + 16 * dq_row_tile + group + 8 * h;
      if (row >= q_len) continue;
      float* out = dq_rows + static_cast<std::int64_t>(row) * Cfg::head_dim +
                   8 * dq_part * Cfg::dq_tiles + 2 * quad;
#pragma unroll
      for (int nt = 0; nt < Cfg::dq_tiles; ++nt) {
        add_pair<Cfg::tuning.vector_atomics>(out + 8 * nt, dq[nt][2 * h], dq[nt][2 * h + 1]);
      }
    }

    stream.finish(index, stage, next_stat);
  }

  store_key_rows<T, Cfg>(d_k + work.kv_offset, dk, warp_first_key, kv_len, scale);
  store_key_rows<T, Cfg>(d_v + work.kv_offset, dv, warp_first_key, kv_len, 1.f);
}

// The bytes of the workspace: D (fp32 per query row), then the fp32 dQ
// accumulator from the next 256-byte boundary.
inline std::size_t d_rows_bytes(std::int64_t rows) {
  return static_cast<std::size_t>(rows) * sizeof(float);
}
inline std::size_t dq_accum_offset(std::int64_t rows) {
  return (d_rows_bytes(rows) + 255) / 256 * 256;
}

inline std::int64_t query_rows(const AttentionShape& shape) {
  return static_cast<std::int64_t>(heads_total(shape)) * shape.seq_len;
}

// D, then the fp32 dQ accumulator: the pre-pass writes both before the main
// launch reads them, so nothing needs to be zero beforehand.
inline std::size_t workspace_bytes(const AttentionShape& shape) {
  if (!has_positive_dimensions(shape)) return 0;
  const std::int64_t rows = query_rows(shape);
  return dq_accum_offset(rows) +
         static_cast<std::size_t>(rows) * static_cast<std::size_t>(shape.head_dim) * sizeof(float);
}

// The main launch's grid, which main_grid_position reads: the catalog's
// order without a mask; causal, the head within its group on x, the K/V
// block on y, the group on z, the groups' size the catalog's rule
// (kv_heads_per_group) for this device.
template <typename Cfg>
dim3 main_grid(const AttentionShape& shape) {
  AttentionShape kv_grid = shape;
  kv_grid.heads = shape.key_heads();
  const TileShape tile{Cfg::br, Cfg::bc};
  if (!shape.causal) return grid_of(Cfg::main_order, kv_grid, tile);
  const std::int64_t kv_blocks = grid_extent(GridAxis::kv_blocks, kv_grid, tile);
  const auto kv_heads = static_cast<std::int64_t>(heads_total(kv_grid));  // batch x K/V heads
  const CurrentDevice device = current_device();
  std::int64_t group = kv_heads_per_group(Cfg::main_launch, problem_of(shape), device.l2_bytes,
                                          l2_partitions_for(device.cc), kv_blocks,
                                          std::int64_t{device.sm_count} * Cfg::min_ctas_per_sm);
  if (group <= 0) group = kv_heads;
  return dim3(static_cast<unsigned>(group), static_cast<unsigned>(kv_blocks),
              static_cast<unsigned>(kv_heads / group));
}

// The three launches of one config with `main_kernel`: fa2_backward_main or
// a variant with its parameters (kernels/fa2_backward_2d.cuh). The main
// launch's grid has the K/V heads; each CTA streams its group's query heads.
template <typename T, typename Cfg, typename MainKernel, typename ConvertKernel>
cudaError_t launch_fa2_backward_with(MainKernel main_kernel, ConvertKernel convert_kernel,
                                     const AttentionShape& shape, const BackwardBuffers& io,
                                     const LaunchContext& context) {
  if (context.workspace == nullptr || context.workspace_bytes < workspace_bytes(shape)) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t rows = query_rows(shape);
  auto* d_rows = static_cast<float*>(context.workspace);
  auto* dq_accum = reinterpret_cast<float*>(static_cast<unsigned char*>(context.workspace) +
                                            dq_accum_offset(rows));
  const auto* d_o = static_cast<const T*>(io.d_o);
  const TileShape tile{Cfg::br, Cfg::bc};
  const int n = shape.seq_len;

  CFR_CUDA_CHECK_NOEXCEPT(launch_tiled(fa2_backward_prepass<T, Cfg>, Cfg::prepass_order, shape,
                                       tile, Cfg::threads, 0, context.stream,
                                       static_cast<const T*>(io.o), d_o, d_rows, dq_accum, n));
  CFR_CUDA_CHECK_NOEXCEPT(launch_kernel(
      main_kernel, main_grid<Cfg>(shape), Cfg::threads, Cfg::smem_bytes, context.stream,
      static_cast<const T*>(io.q), static_cast<const T*>(io.k), static_cast<const T*>(io.v), d_o,
      io.lse, d_rows, dq_accum, static_cast<T*>(io.d_k), static_cast<T*>(io.d_v), n, shape.keys(),
      shape.heads / shape.key_heads(), shape.causal, softmax_scale_of(shape),
      softmax_scale_log2_of(shape)));
  return launch_tiled(convert_kernel, Cfg::convert_order, shape, tile, Cfg::threads, 0,
                      context.stream, dq_accum, static_cast<T*>(io.d_q), n,
                      softmax_scale_of(shape));
}

template <typename T, typename Cfg, typename MainKernel>
cudaError_t launch_fa2_backward_with(MainKernel main_kernel, const AttentionShape& shape,
                                     const BackwardBuffers& io, const LaunchContext& context) {
  return launch_fa2_backward_with<T, Cfg>(main_kernel, fa2_backward_convert_dq<T, Cfg>, shape, io,
                                          context);
}

// Square self-attention launches the main kernel's square instantiation, GQA
// its grouped one.
template <typename T, typename Cfg>
cudaError_t launch_fa2_backward_config(const AttentionShape& shape, const BackwardBuffers& io,
                                       const LaunchContext& context) {
  if (shape.key_heads() == shape.heads) {
    return launch_fa2_backward_with<T, Cfg>(fa2_backward_main<T, Cfg, false>, shape, io, context);
  }
  return launch_fa2_backward_with<T, Cfg>(fa2_backward_main<T, Cfg, true>, shape, io, context);
}

}  // namespace cfr::kernels::fa2_bwd
