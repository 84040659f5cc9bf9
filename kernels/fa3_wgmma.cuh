#pragma once

// FlashAttention-3's forward structure on sm_90a (wgmma + TMA + warp
// specialization), fp16 and bf16 with fp32 accumulate. A tile is a Q block
// of Br = 128 or 192 rows of one head; one persistent CTA per SM takes tiles
// until none is left, with Br / 64 + 1 warpgroups:
//   - warpgroup 0, the producer, gives most of its registers away
//     (setmaxnreg.dec) and one of its threads issues every copy: per tile the
//     Q block (into one of two Q slots where they fit, so the next tile's Q
//     and K/V arrive while this one finishes), then K and V block by block
//     into a ring of `stages` slots, by the bulk tensor copy engine (TMA),
//     each slot with "full" barriers for K and V and "empty" barriers the
//     consumers release each on;
//   - warpgroups 1 to Br / 64, the consumers, take the registers
//     (setmaxnreg.inc) and own 64 query rows each: S = Q K^T by wgmma m64nBck16 with Q and K
//     read from shared memory through descriptors, the online softmax in
//     registers (exp2 with the scale folded into one FFMA, the causal mask on
//     diagonal blocks only), P converted in registers and fed back as the A
//     operand of O += P V (wgmma with A from registers, V read through the
//     transpose bit), O normalized and stored, LSE in natural log.
// Every shared-memory tile is 128-byte swizzled column blocks of 64 elements, the layout
// TMA writes and wgmma reads (kernels/wgmma_layout.hpp, tested on the CPU).
// Rows past the sequence arrive as zeros (TMA fills outside the tensor), so
// only S's columns past kv_len are masked and only rows past q_len unstored.

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "kernels/exp2_polynomial.hpp"
#include "kernels/fa2_mma.cuh"
#include "kernels/fa3_tiles.hpp"
#include "kernels/launch_preamble.cuh"
#include "kernels/online_softmax.cuh"
#include "kernels/tma_pipeline.cuh"
#include "kernels/wgmma.cuh"
#include "kernels/wgmma_layout.hpp"

namespace cfr::kernels::fa3 {

template <int HeadDim, int Br, int Bc, int Stages,
          // three axes, not a GridOrder: nvcc's host stub cannot spell an array argument
          GridAxis AxisX, GridAxis AxisY, GridAxis AxisZ, CausalBlockOrder CausalOrder>
struct Fa3Config {
  static constexpr int head_dim = HeadDim;
  static constexpr int br = Br;
  static constexpr int bc = Bc;
  static constexpr int stages = Stages;
  static constexpr GridOrder order{AxisX, AxisY, AxisZ};
  static constexpr CausalBlockOrder causal_order = CausalOrder;

  static constexpr int rows_per_consumer = 64;  // wgmma's M
  static constexpr int consumer_warpgroups = br / rows_per_consumer;
  static constexpr int warpgroups = 1 + consumer_warpgroups;
  static constexpr int threads = warpgroups * wgmma::warpgroup_threads;
  static constexpr int warps = threads / 32;
  static constexpr int consumer_threads = consumer_warpgroups * wgmma::warpgroup_threads;
  // Two consumers: 384 threads at one CTA an SM get 65536 / 384 = 170
  // registers, rounded to 168; the producer's 144 spare registers a thread
  // pay for the consumers' 72 more: 128 x 24 + 256 x 240 = 64512 <= 65536.
  // Three (FlashAttention-3's d 64 tile): 512 threads get 128, and
  // 128 x 32 + 384 x 160 = 65536 (setmaxnreg takes multiples of 8).
  static constexpr int producer_registers = consumer_warpgroups == 2 ? 24 : 32;
  static constexpr int consumer_registers = consumer_warpgroups == 2 ? 240 : 160;

  static constexpr int column_blocks = head_dim / wgmma::block_columns;
  static constexpr int q_bytes = br * head_dim * 2;
  static constexpr int kv_tile_bytes = bc * head_dim * 2;
  // q_full, q_empty per Q slot, then k_full, v_full, k_empty and v_empty per
  // K/V slot, 8 bytes each, and each Q slot's tile index (4 bytes, padded).
  static constexpr int barrier_bytes_for(int q_slots) {
    return 8 * (2 * q_slots + 4 * stages) + 8 * q_slots;
  }
  // The tiles must start on 1024-byte boundaries (the swizzle's period):
  // dynamic shared memory promises 16, so the kernel rounds its base up.
  static constexpr int smem_bytes_for(int q_slots) {
    return q_slots * q_bytes + 2 * stages * kv_tile_bytes + barrier_bytes_for(q_slots) +
           wgmma::swizzle_atom_bytes;
  }
  // Two Q slots where they fit: the producer loads the next tile's Q, and
  // streams its K/V blocks, while the consumers still finish this tile, so a
  // tile starts without waiting for its first copies (d 128's 176-key blocks
  // leave no room for a second Q).
  static constexpr int q_slots = smem_bytes_for(2) <= 227 * 1024 ? 2 : 1;
  static constexpr int q_offset = 0;
  static constexpr int k_offset = q_offset + q_slots * q_bytes;
  static constexpr int v_offset = k_offset + stages * kv_tile_bytes;
  static constexpr int barrier_offset = v_offset + stages * kv_tile_bytes;
  static constexpr int barrier_bytes = barrier_bytes_for(q_slots);
  static constexpr int smem_bytes = smem_bytes_for(q_slots);

  static constexpr int qk_steps = head_dim / wgmma::k_step;
  static constexpr int pv_steps = bc / wgmma::k_step;
  static constexpr int s_values = bc / 2;  // a thread's share of the 64 x Bc accumulator
  // Of every 16 exponentials of S, how many the FMA pipe computes
  // (kernels/exp2_polynomial.hpp) rather than MUFU.EX2: at d 64 a block's
  // exponentials take as many SM clocks as its two matmuls (docs/perf-notes.md,
  // "v6"); at d 128 the matmuls take twice as many.
  static constexpr int fma_exp2_of_16 = head_dim == 64 ? 3 : 0;
  // One wgmma descriptor a block and operand, each K step's a constant on
  // (wgmma_layout.hpp's step offsets): v8.5 took 1-2 % off d 64's 128 x 128
  // tiles and cost up to 3 % on the 192-row ones (docs/perf-notes.md, "v8.5"),
  // so only the tile where it paid takes it (v8.6: 0.987 of v8.2's time there,
  // 0.999 elsewhere).
  static constexpr bool step_descriptors = head_dim == 64 && br == 128 && bc == 128;
  // How many running parts a row half's sum is kept in: at d 64, where the
  // softmax sets the pace, four parts (chains of Bc / 16 dependent additions
  // instead of Bc / 4) took 1-2 % off without a mask on the H200; at d 128
  // they cost 0.2-1 %, and on the 192-row tiles (three consumers at 160
  // registers) 1-4 % (docs/perf-notes.md, "v8.2").
  static constexpr int row_sum_parts = head_dim == 64 && consumer_warpgroups == 2 ? 4 : 1;
  static_assert(row_sum_parts == 1 || row_sum_parts == 2 || row_sum_parts == 4);
  static constexpr int o_values = head_dim / 2;  // ... of the 64 x d accumulator

  static_assert(br == consumer_warpgroups * rows_per_consumer &&
                (consumer_warpgroups == 2 || consumer_warpgroups == 3));
  static_assert(consumer_warpgroups == 2 || bc == 128,
                "three consumers' 160 registers hold S, P and O of 128 keys only");
  static_assert(bc == 128 || bc == 176 || bc == 192, "S = Q K^T is one wgmma m64nBck16 per K step");
  static_assert(head_dim == 64 || head_dim == 128, "O += P V is wgmma m64n64/n128k16");
  static_assert(stages >= 2);
  static_assert(q_bytes % wgmma::swizzle_atom_bytes == 0 &&
                kv_tile_bytes % wgmma::swizzle_atom_bytes == 0);
  // The registers the CTA's threads hold after the split: the launcher
  // refuses a build whose allocation (registers a thread x threads) is less.
  static constexpr int register_budget =
      producer_registers * wgmma::warpgroup_threads + consumer_registers * consumer_threads;
  static_assert(register_budget <= 65536);
  static_assert(smem_bytes <= 227 * 1024, "sm_90 grants a block at most 227 KB");
};

// What the kernel is given besides its tensor maps.
template <typename T>
struct Fa3Params {
  T* o;
  float* lse;
  int q_len;
  int kv_len;
  int heads_per_kv_head;
  int heads_per_group;  // query heads whose tiles run side by side (kernels/fa3_tiles.hpp)
  bool causal;
  float scale_log2;
  int tiles;  // (Q block, head) pairs: q_blocks x batch x heads
  // Two counters, zero before the launch and left zero after it: the next
  // tile to hand out (past the first gridDim.x) and the CTAs finished.
  int* scheduler;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using Fa3Work = TileWork;

template <typename Cfg, typename T>
__device__ __forceinline__ Fa3Work work_of_tile(int tile, const Fa3Params<T>& params) {
  return tile_work(tile, params.q_len, params.kv_len, params.heads_per_kv_head, params.causal,
                   {Cfg::br, Cfg::bc, Cfg::causal_order == CausalBlockOrder::heaviest_first,
                    params.heads_per_group});
}

// The shared-memory layout of one CTA.
template <typename Cfg>
struct Fa3Smem {
  std::uint32_t base;  // 1024-aligned
  __device__ __forceinline__ std::uint32_t q_tile(int q_slot) const {
    return base + Cfg::q_offset + q_slot * Cfg::q_bytes;
  }
  __device__ __forceinline__ std::uint32_t k_tile(int slot) const {
    return base + Cfg::k_offset + slot * Cfg::kv_tile_bytes;
  }
  __device__ __forceinline__ std::uint32_t v_tile(int slot) const {
    return base + Cfg::v_offset + slot * Cfg::kv_tile_bytes;
  }
  __device__ __forceinline__ std::uint32_t barriers() const { return base + Cfg::barrier_offset; }
  __device__ __forceinline__ std::uint32_t q_full(int q_slot) const {
    return barriers() + 8 * q_slot;
  }
  // Q's slot is free again: every consumer's last S of its tile is done.
  __device__ __forceinline__ std::uint32_t q_empty(int q_slot) const {
    return barriers() + 8 * (Cfg::q_slots + q_slot);
  }
  __device__ __forceinline__ std::uint32_t k_full(int slot) const {
    return barriers() + 8 * (2 * Cfg::q_slots + slot);
  }
  __device__ __forceinline__ std::uint32_t v_full(int slot) const {
    return barriers() + 8 * (2 * Cfg::q_slots + Cfg::stages + slot);
  }
  __device__ __forceinline__ std::uint32_t k_empty(int slot) const {
    return barriers() + 8 * (2 * Cfg::q_slots + 2 * Cfg::stages + slot);
  }
  __device__ __forceinline__ std::uint32_t v_empty(int slot) const {
    return barriers() + 8 * (2 * Cfg::q_slots + 3 * Cfg::stages + slot);
  }
  // The producer writes a Q slot's tile index before it arms its q_full; the
  // consumers read it once q_full completes.
  __device__ __forceinline__ std::uint32_t tile_index(int q_slot) const {
    return barriers() + 8 * (2 * Cfg::q_slots + 4 * Cfg::stages + q_slot);
  }
};

template <typename Cfg>
__device__ __forceinline__ RingPosition ring_position(int n) {
  return fa3::ring_position(n, Cfg::stages);
}

__device__ __forceinline__ void store_shared(std::uint32_t address, int value) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(value) : "memory");
}

__device__ __forceinline__ int load_shared(std::uint32_t address) {
  int value;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(value) : "r"(address) : "memory");
  return value;
}

// Rows [first_row, first_row + rows) of matrix `plane` of a tensor map into
// `tile`, one box of 64 columns per column block, completing on `full`.
template <typename Cfg, int rows>
__device__ __forceinline__ void load_tile(std::uint32_t tile, const CUtensorMap* map,
                                          std::uint32_t full, int first_row, int plane) {
  constexpr int box_bytes = rows * wgmma::swizzle_row_bytes;
  tma::arrive_expect_bytes(full, Cfg::column_blocks * box_bytes);
#pragma unroll
  for (int c = 0; c < Cfg::column_blocks; ++c) {
    tma::load_box_3d(tile + c * box_bytes, map, full, c * wgmma::block_columns, first_row, plane);
  }
}

// The producer thread, for each tile the CTA takes (its blockIdx.x first,
// then the next unclaimed one): once the consumers are done with the Q slot's
// last Q, the tile's index and its Q block, then each K/V block into the ring, K
// once the consumers have released the slot's previous K (after its S), V
// once they have released its previous V (after its P V). A tile index past
// the last tells the consumers to stop. The last CTA to finish sets the
// counters back to zero for the next launch.
template <typename Cfg, typename T>
__device__ __forceinline__ void produce(const Fa3Smem<Cfg>& smem, const CUtensorMap* q_map,
                                        const CUtensorMap* k_map, const CUtensorMap* v_map,
                                        const Fa3Params<T>& params) {
  int loaded = 0;  // K/V blocks so far
  int tile = static_cast<int>(blockIdx.x);
  for (int round = 0;; ++round) {
    const RingPosition q_at = fa3::ring_position(round, Cfg::q_slots);
    tma::wait(smem.q_empty(q_at.slot), q_at.parity ^ 1u);
    store_shared(smem.tile_index(q_at.slot), tile);
    if (tile >= params.tiles) {
      tma::arrive(smem.q_full(q_at.slot));
      break;
    }
    const Fa3Work work = work_of_tile<Cfg>(tile, params);
    load_tile<Cfg, Cfg::br>(smem.q_tile(q_at.slot), q_map, smem.q_full(q_at.slot), work.q0,
                            static_cast<int>(work.head));
    for (int block = 0; block < work.kv_blocks; ++block, ++loaded) {
      const RingPosition at = ring_position<Cfg>(loaded);
      tma::wait(smem.k_empty(at.slot), at.parity ^ 1u);
      load_tile<Cfg, Cfg::bc>(smem.k_tile(at.slot), k_map, smem.k_full(at.slot), block * Cfg::bc,
                              work.kv_head);
      tma::wait(smem.v_empty(at.slot), at.parity ^ 1u);
      load_tile<Cfg, Cfg::bc>(smem.v_tile(at.slot), v_map, smem.v_full(at.slot), block * Cfg::bc,
                              work.kv_head);
    }
    tile = static_cast<int>(gridDim.x) + atomicAdd(&params.scheduler[0], 1);
  }
  // Orders this CTA's last claim on scheduler[0] before its count on
  // scheduler[1]: relaxed atomics on two addresses may otherwise be seen out
  // of order, and the reset below could race a late claim.
  __threadfence();
  if (atomicAdd(&params.scheduler[1], 1) == static_cast<int>(gridDim.x) - 1) {
    params.scheduler[0] = 0;  // every CTA has claimed its last tile
    params.scheduler[1] = 0;
  }
}

// The running softmax state of a thread's two rows (l/4 and l/4 + 8 of its
// warp's 16): raw-score maxima and this thread's share of each row's sum.
struct RowState {
  float max[2] = {-INFINITY, -INFINITY};
  float sum[2] = {0.f, 0.f};
};

// The largest of the first n values, as a tree of any size (Bc / 8 partial
// maxima: 16, 22 or 24).
template <int n, int count>
__device__ __forceinline__ float max_of_first(float (&values)[count]) {
  if constexpr (n == 1) {
    return values[0];
  } else {
    constexpr int half = (n + 1) / 2;
#pragma unroll
    for (int i = 0; i < n - half; ++i) values[i] = fmaxf(values[i], values[i + half]);
    return max_of_first<half>(values);
  }
}

// The max of a thread's scores of row half h (accumulator elements with
// (i / 2) % 2 == h), over the quad that shares the row.
template <int count>
__device__ __forceinline__ float row_max_of(const float (&s)[count], int h) {
  float partial[count / 4];
#pragma unroll
  for (int j = 0; j < count / 4; ++j) partial[j] = fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]);
  return fa2::quad_max(max_of_first<count / 4>(partial));
}

// -inf where a key is past kv_len or (causal) right of the row's diagonal.
template <typename Cfg>
__device__ __forceinline__ void mask_scores(float (&s)[Cfg::s_values], int thread, int first_row,
                                            int c0, int kv_len, bool causal, int shift) {
#pragma unroll
  for (int i = 0; i < Cfg::s_values; ++i) {
    const wgmma::MatrixPosition at = wgmma::accumulator_position(thread, i);
    const int row = first_row + at.row;
    const int col = c0 + at.col;
    if (col >= kv_len || (causal && col > row + shift)) s[i] = -INFINITY;
  }
}

// One block's online softmax: the rows' maxima move, the sums are
// rescaled, S becomes P = 2^(s * scale_log2 - m * scale_log2) in place;
// `rescale` is the factor O must take before this block's P V is added.
template <typename Cfg>
__device__ __forceinline__ void softmax_step(float (&s)[Cfg::s_values], RowState& rows,
                                             float scale_log2, float (&rescale)[2]) {
  float base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const RowMaxStep moved = row_max_step(rows.max[h], row_max_of(s, h), scale_log2,
                                          [](float e) { return fa2::exp2_approx(e); });
    base[h] = moved.base;
    rescale[h] = moved.rescale;
    rows.max[h] = moved.max;
    rows.sum[h] *= moved.rescale;
  }
  // Each row half's sum in Cfg::row_sum_parts running parts: one chain of
  // Bc / 4 dependent additions a block waits out each addition's latency.
  float parts[2][Cfg::row_sum_parts] = {};
#pragma unroll
  for (int i = 0; i < Cfg::s_values; ++i) {
    const int h = (i / 2) % 2;
    const float x = fmaf(s[i], scale_log2, -base[h]);
    s[i] = i % 16 < 16 - Cfg::fma_exp2_of_16 ? fa2::exp2_approx(x) : exp2_polynomial(x);
    if constexpr (Cfg::row_sum_parts == 1) {
      rows.sum[h] += s[i];
    } else {
      parts[h][(i / 4) % Cfg::row_sum_parts] += s[i];
    }
  }
  if constexpr (Cfg::row_sum_parts > 1) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      // Pairwise, so the parts' own sum is log2(parts) additions deep.
#pragma unroll
      for (int width = Cfg::row_sum_parts / 2; width >= 1; width /= 2) {
#pragma unroll
        for (int part = 0; part < width; ++part) parts[h][part] += parts[h][part + width];
      }
      rows.sum[h] += parts[h][0];
    }
  }
}

// O / l to global memory (rows past q_len skipped) and LSE in natural log.
template <typename T, typename Cfg>
__device__ __forceinline__ void store_output(const float (&o_acc)[Cfg::o_values],
                                             const RowState& rows, int thread, int first_row,
                                             T* __restrict__ o, float* __restrict__ lse,
                                             std::int64_t head, int q_len, float scale_log2) {
  float inverse[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float total = rows.sum[h];
    total += __shfl_xor_sync(0xffffffffu, total, 1);
    total += __shfl_xor_sync(0xffffffffu, total, 2);
    inverse[h] = 1.f / total;  // total > 0.99: the row max contributes 2^0
    const int row = first_row + wgmma::accumulator_position(thread, 2 * h).row;
    if (thread % 4 == 0 && row < q_len) {
      lse[head * q_len + row] = natural_lse(rows.max[h] * scale_log2, total);
    }
  }
  T* head_o = o + head * q_len * Cfg::head_dim;
#pragma unroll
  for (int i = 0; i < Cfg::o_values; i += 2) {
    const wgmma::MatrixPosition at = wgmma::accumulator_position(thread, i);
    const int row = first_row + at.row;
    if (row >= q_len) continue;
    const float scale = inverse[(i / 2) % 2];
    *reinterpret_cast<std::uint32_t*>(head_o + static_cast<std::int64_t>(row) * Cfg::head_dim +
                                      at.col) =
        fa2::pack_pair<T>(o_acc[i] * scale, o_acc[i + 1] * scale);
  }
}

template <int count>
__device__ __forceinline__ void rescale_output(float (&o_acc)[count], const float (&rescale)[2]) {
#pragma unroll
  for (int i = 0; i < count; ++i) o_acc[i] *= rescale[(i / 2) % 2];
}

// Issues S = Q K^T over the K tile in `slot` as one wgmma batch.
template <typename T, typename Cfg>
__device__ __forceinline__ void issue_scores(float (&s)[Cfg::s_values], std::uint32_t q_rows,
                                             std::uint32_t k_tile) {
  if constexpr (Cfg::step_descriptors) {
    wgmma::issue_k_major<T, Cfg::bc, Cfg::qk_steps>(s, q_rows, Cfg::br, k_tile, Cfg::bc);
  } else {
#pragma unroll
    for (int step = 0; step < Cfg::qk_steps; ++step) {
      // Q's column blocks are Br rows apart; this warpgroup's rows start 64
      // rows into each.
      const std::uint64_t a = wgmma::encode(wgmma::k_major_operand(q_rows, Cfg::br, step));
      const std::uint64_t b = wgmma::encode(wgmma::k_major_operand(k_tile, Cfg::bc, step));
      wgmma::mma_ss<T, Cfg::bc>(s, a, b, step > 0 ? 1 : 0);
    }
  }
  wgmma::commit_group();
}

// Issues O += P V over the V tile in `slot` as one wgmma batch.
template <typename T, typename Cfg>
__device__ __forceinline__ void issue_pv(float (&o_acc)[Cfg::o_values],
                                         const std::uint32_t (&p)[Cfg::pv_steps][4],
                                         std::uint32_t v_tile) {
  if constexpr (Cfg::step_descriptors) {
    wgmma::issue_register_a<T, Cfg::head_dim, Cfg::pv_steps>(o_acc, p, v_tile, Cfg::bc);
  } else {
#pragma unroll
    for (int step = 0; step < Cfg::pv_steps; ++step) {
      const std::uint64_t b = wgmma::encode(wgmma::mn_major_operand(v_tile, Cfg::bc, step));
      wgmma::mma_rs<T, Cfg::head_dim>(o_acc, p[step], b, 1);
    }
  }
  wgmma::commit_group();
}

// What a consumer warpgroup knows of its rows.
struct ConsumerRows {
  int thread;     // within the warpgroup
  int first_row;  // of the sequence
  int kv_len;
  bool causal;
  int shift;
  float scale_log2;
};

// S of block `block` to P in place (masked where a key can be past kv_len or
// right of a row's diagonal).
template <typename Cfg>
__device__ __forceinline__ void scores_to_p(float (&s)[Cfg::s_values], int block,
                                            const ConsumerRows& at, RowState& rows,
                                            float (&rescale)[2]) {
  const int c0 = block * Cfg::bc;
  if (c0 + Cfg::bc > at.kv_len || (at.causal && c0 + Cfg::bc - 1 > at.first_row + at.shift)) {
    mask_scores<Cfg>(s, at.thread, at.first_row, c0, at.kv_len, at.causal, at.shift);
  }
  softmax_step<Cfg>(s, rows, at.scale_log2, rescale);
}

// P as the A operand of P V, one set of four registers per K step.
template <typename T, typename Cfg>
__device__ __forceinline__ void pack_p(const float (&s)[Cfg::s_values],
                                       std::uint32_t (&p)[Cfg::pv_steps][4]) {
#pragma unroll
  for (int step = 0; step < Cfg::pv_steps; ++step) wgmma::pack_a_step<T>(s, step, p[step]);
}

// FA3's inter-warpgroup ping-pong (§3.1): the consumers take turns, in
// order, to issue their wgmma batches, each waiting on its own named barrier
// and then signalling the next one's, so one's softmax runs while the others'
// matmuls do. Consumer 0 goes first (the last consumer signals it once at the
// start) and waits once more at the end, for the last consumer's signal after
// its last batch: every barrier then meets as often as it is waited on. A
// barrier meets when 256 threads reached it: the waiting warpgroup and the
// signalling one. Barrier 0 is __syncthreads'.
template <typename Cfg>
struct MatmulTurns {
  static constexpr int pair_threads = 2 * wgmma::warpgroup_threads;
  static constexpr int last = Cfg::consumer_warpgroups - 1;
  int consumer;

  template <int turn>
  __device__ __forceinline__ static void wait_for() {
    tma::named_barrier_sync<1 + turn, pair_threads>();
  }
  template <int turn>
  __device__ __forceinline__ static void signal() {
    tma::named_barrier_arrive<1 + turn, pair_threads>();
  }
  __device__ __forceinline__ void start() const {
    if (consumer == last) signal<0>();
  }
  __device__ __forceinline__ void begin() const {
    if (consumer == 0) {
      wait_for<0>();
    } else if (consumer == 1) {
      wait_for<1>();
    } else {
      wait_for<2>();
    }
  }
  __device__ __forceinline__ void end() const {
    if (consumer == last) {
      signal<0>();
    } else if (consumer == 0) {
      signal<1>();
    } else {
      signal<2>();
    }
  }
  __device__ __forceinline__ void finish() const {
    if (consumer == 0) begin();
  }
};

// What a consumer warpgroup carries through one tile.
template <typename Cfg>
struct ConsumerTile {
  float o_acc[Cfg::o_values];
  float s[Cfg::s_values];
  std::uint32_t p[Cfg::pv_steps][4];
  float rescale[2];
  RowState rows;
};

// One tile's 64 query rows of a consumer warpgroup over the tile's K/V
// blocks (the n-th of the CTA's run starting at `consumed`), with FA3's
// intra-warpgroup overlap: block j's S = Q K^T and block j - 1's O += P V are
// issued together, and the softmax of block j runs while P V still does (P
// is packed once P V is done: it reads P's registers). K's slot is released
// when its S is done, V's when its P V is, Q's after the tile's last S.
template <typename T, typename Cfg>
__device__ __forceinline__ void consume_tile(const Fa3Smem<Cfg>& smem, const Fa3Work& work,
                                             int consumer, int q_slot, int consumed,
                                             const Fa3Params<T>& params,
                                             const MatmulTurns<Cfg>& turns) {
  const ConsumerRows at{static_cast<int>(threadIdx.x) % wgmma::warpgroup_threads,
                        work.q0 + consumer * Cfg::rows_per_consumer,
                        params.kv_len,
                        params.causal,
                        work.shift,
                        params.scale_log2};
  const std::uint32_t q_rows =
      smem.q_tile(q_slot) + consumer * Cfg::rows_per_consumer * wgmma::swizzle_row_bytes;
  ConsumerTile<Cfg> t;
#pragma unroll
  for (int i = 0; i < Cfg::o_values; ++i) t.o_acc[i] = 0.f;

  const RingPosition first = ring_position<Cfg>(consumed);
  turns.begin();
  tma::wait(smem.k_full(first.slot), first.parity);
  wgmma::fence();
  issue_scores<T, Cfg>(t.s, q_rows, smem.k_tile(first.slot));
  turns.end();
  wgmma::wait_group<0>();
  wgmma::fence_operands(t.s);
  tma::arrive(smem.k_empty(first.slot));
  scores_to_p<Cfg>(t.s, 0, at, t.rows, t.rescale);  // O is 0: its rescale is moot
  pack_p<T, Cfg>(t.s, t.p);

  for (int block = 1; block < work.kv_blocks; ++block) {
    const RingPosition now = ring_position<Cfg>(consumed + block);
    const RingPosition before = ring_position<Cfg>(consumed + block - 1);
    wgmma::fence_operands(t.p);
    turns.begin();
    tma::wait(smem.k_full(now.slot), now.parity);
    wgmma::fence();  // P was packed from the registers S is about to take
    issue_scores<T, Cfg>(t.s, q_rows, smem.k_tile(now.slot));
    // O is idle (the last P V was waited for): its rescale overlaps S.
    rescale_output(t.o_acc, t.rescale);
    wgmma::fence_operands(t.o_acc);
    tma::wait(smem.v_full(before.slot), before.parity);
    wgmma::fence();  // O was rescaled; a wgmma after a branch needs its own fence
    issue_pv<T, Cfg>(t.o_acc, t.p, smem.v_tile(before.slot));
    turns.end();
    wgmma::wait_group<1>();  // S is done; P V may still run
    wgmma::fence_operands(t.s);
    tma::arrive(smem.k_empty(now.slot));
    scores_to_p<Cfg>(t.s, block, at, t.rows, t.rescale);
    wgmma::wait_group<0>();  // P V is done with the registers of P
    wgmma::fence_operands(t.o_acc);
    tma::arrive(smem.v_empty(before.slot));
    pack_p<T, Cfg>(t.s, t.p);
  }
  tma::arrive(smem.q_empty(q_slot));  // every S of the tile is done

  const RingPosition last = ring_position<Cfg>(consumed + work.kv_blocks - 1);
  rescale_output(t.o_acc, t.rescale);
  wgmma::fence_operands(t.o_acc);
  wgmma::fence_operands(t.p);
  turns.begin();
  tma::wait(smem.v_full(last.slot), last.parity);
  wgmma::fence();
  issue_pv<T, Cfg>(t.o_acc, t.p, smem.v_tile(last.slot));
  turns.end();
  wgmma::wait_group<0>();
  wgmma::fence_operands(t.o_acc);
  tma::arrive(smem.v_empty(last.slot));
  store_output<T, Cfg>(t.o_acc, t.rows, at.thread, at.first_row, params.o, params.lse, work.head,
                       params.q_len, params.scale_log2);
}

// A consumer warpgroup: every tile the producer hands the CTA, until the
// index past the last.
template <typename T, typename Cfg>
__device__ __forceinline__ void consume(const Fa3Smem<Cfg>& smem, int consumer,
                                        const Fa3Params<T>& params) {
  const MatmulTurns<Cfg> turns{consumer};
  turns.start();
  int consumed = 0;  // K/V blocks so far
  for (int round = 0;; ++round) {
    const RingPosition q_at = fa3::ring_position(round, Cfg::q_slots);
    tma::wait(smem.q_full(q_at.slot), q_at.parity);
    const int tile = load_shared(smem.tile_index(q_at.slot));
    if (tile >= params.tiles) break;
    const Fa3Work work = work_of_tile<Cfg>(tile, params);
    consume_tile<T, Cfg>(smem, work, consumer, q_at.slot, consumed, params, turns);
    consumed += work.kv_blocks;
  }
  turns.finish();
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Persistent: the launcher starts one CTA per SM (at most one per tile), and
// each takes tiles until none is left.
template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, 1)
    fa3_wgmma_forward(const __grid_constant__ CUtensorMap q_map,
                      const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, const Fa3Params<T> params) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_bytes[];
  const auto raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_bytes));
  const Fa3Smem<Cfg> smem{(raw + wgmma::swizzle_atom_bytes - 1) &
                          ~static_cast<std::uint32_t>(wgmma::swizzle_atom_bytes - 1)};
  const int warpgroup = static_cast<int>(threadIdx.x) / wgmma::warpgroup_threads;

  if (threadIdx.x == 0) {
    tma::prefetch_tensor_map(&q_map);
    tma::prefetch_tensor_map(&k_map);
    tma::prefetch_tensor_map(&v_map);
    for (int q_slot = 0; q_slot < Cfg::q_slots; ++q_slot) {
      tma::barrier_init(smem.q_full(q_slot), 1);
      tma::barrier_init(smem.q_empty(q_slot), Cfg::consumer_threads);
    }
    for (int slot = 0; slot < Cfg::stages; ++slot) {
      tma::barrier_init(smem.k_full(slot), 1);
      tma::barrier_init(smem.v_full(slot), 1);
      tma::barrier_init(smem.k_empty(slot), Cfg::consumer_threads);
      tma::barrier_init(smem.v_empty(slot), Cfg::consumer_threads);
    }
    tma::barrier_init_fence();
  }
  __syncthreads();

  if (warpgroup == 0) {
    tma::release_registers<Cfg::producer_registers>();
    if (threadIdx.x == 0) produce<Cfg>(smem, &q_map, &k_map, &v_map, params);
    return;
  }
  tma::claim_registers<Cfg::consumer_registers>();
  consume<T, Cfg>(smem, warpgroup - 1, params);
#else
  (void)q_map;
  (void)k_map;
  (void)v_map;
  (void)params;
  __trap();  // built only for sm_90a (kernels/meson.build's arch_specific)
#endif
}

}  // namespace cfr::kernels::fa3
