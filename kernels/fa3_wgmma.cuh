#pragma once

// FlashAttention-3's forward structure on sm_90a (wgmma + TMA + warp
// specialization), fp16 and bf16 with fp32 accumulate. One CTA per (Q block
// of Br = 128 rows, head, batch) and three warpgroups:
//   - warpgroup 0, the producer, gives most of its registers away
//     (setmaxnreg.dec) and one of its threads issues every copy: the Q block
//     once, then K and V tile by tile into a ring of `stages` slots, by the
//     bulk tensor copy engine (TMA), each slot with "full" barriers for K and
//     V and "empty" barriers the consumers release each on;
//   - warpgroups 1 and 2, the consumers, take the registers (setmaxnreg.inc)
//     and own 64 query rows each: S = Q K^T by wgmma m64n128k16 with Q and K
//     read from shared memory through descriptors, the online softmax in
//     registers (exp2 with the scale folded into one FFMA, the causal mask on
//     diagonal blocks only), P converted in registers and fed back as the A
//     operand of O += P V (wgmma with A from registers, V read through the
//     transpose bit), O normalized and stored, LSE in natural log.
// Every tile is 128-byte swizzled column blocks of 64 elements, the layout
// TMA writes and wgmma reads (kernels/wgmma_layout.hpp, tested on the CPU).
// Rows past the sequence arrive as zeros (TMA fills outside the tensor), so
// only S's columns past kv_len are masked and only rows past q_len unstored.

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

#include "kernels/fa2_mma.cuh"
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

  static constexpr int consumer_warpgroups = 2;
  static constexpr int warpgroups = 1 + consumer_warpgroups;
  static constexpr int threads = warpgroups * wgmma::warpgroup_threads;
  static constexpr int warps = threads / 32;
  static constexpr int consumer_threads = consumer_warpgroups * wgmma::warpgroup_threads;
  static constexpr int rows_per_consumer = 64;  // wgmma's M
  // 384 threads at one CTA an SM get 65536 / 384 = 170 registers, rounded to
  // 168; the producer's 144 spare registers a thread pay for the consumers'
  // 72 more: 128 x 24 + 256 x 240 = 64512 <= 65536.
  static constexpr int producer_registers = 24;
  static constexpr int consumer_registers = 240;

  static constexpr int column_blocks = head_dim / wgmma::block_columns;
  static constexpr int q_bytes = br * head_dim * 2;
  static constexpr int kv_tile_bytes = bc * head_dim * 2;
  static constexpr int q_offset = 0;
  static constexpr int k_offset = q_offset + q_bytes;
  static constexpr int v_offset = k_offset + stages * kv_tile_bytes;
  static constexpr int barrier_offset = v_offset + stages * kv_tile_bytes;
  // q_full, then k_full, v_full, k_empty and v_empty per slot: 8 bytes each.
  static constexpr int barrier_bytes = 8 * (1 + 4 * stages);
  // The tiles must start on 1024-byte boundaries (the swizzle's period):
  // dynamic shared memory promises 16, so the kernel rounds its base up.
  static constexpr int smem_bytes = barrier_offset + barrier_bytes + wgmma::swizzle_atom_bytes;

  static constexpr int qk_steps = head_dim / wgmma::k_step;
  static constexpr int pv_steps = bc / wgmma::k_step;
  static constexpr int s_values = bc / 2;        // a thread's share of the 64 x Bc accumulator
  static constexpr int o_values = head_dim / 2;  // ... of the 64 x d accumulator

  static_assert(br == consumer_warpgroups * rows_per_consumer);
  static_assert(bc == 128, "S = Q K^T is one wgmma m64n128k16 per K step");
  static_assert(head_dim == 64 || head_dim == 128, "O += P V is wgmma m64n64/n128k16");
  static_assert(stages >= 2);
  static_assert(q_bytes % wgmma::swizzle_atom_bytes == 0 &&
                kv_tile_bytes % wgmma::swizzle_atom_bytes == 0);
  static_assert(producer_registers * wgmma::warpgroup_threads +
                    consumer_registers * consumer_threads <=
                65536);
  static_assert(smem_bytes <= 227 * 1024, "sm_90 grants a block at most 227 KB");
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Where a CTA's work lies: its Q rows, its head and K/V head, its K/V blocks.
struct Fa3Work {
  int q0;
  std::int64_t head;
  int kv_head;
  int kv_blocks;
  int shift;  // bottom-right causal: query row i sees keys up to i + shift
};

template <typename Cfg>
__device__ __forceinline__ Fa3Work work_of_cta(int q_len, int kv_len, int heads_per_kv_head,
                                               bool causal) {
  const GridPosition at = grid_position<Cfg::order, GridAxis::q_blocks>();
  const int q_blocks = (q_len + Cfg::br - 1) / Cfg::br;
  const bool reversed = causal && Cfg::causal_order == CausalBlockOrder::heaviest_first;
  const int q0 = (reversed ? q_blocks - 1 - at.block : at.block) * Cfg::br;
  const int shift = kv_len - q_len;
  const int last_row = min(q_len, q0 + Cfg::br) - 1;
  const int all_kv_blocks = (kv_len + Cfg::bc - 1) / Cfg::bc;
  const int kv_blocks =
      causal ? min(all_kv_blocks, (last_row + shift) / Cfg::bc + 1) : all_kv_blocks;
  return {q0, at.head, static_cast<int>(at.head / heads_per_kv_head), kv_blocks, shift};
}

// The shared-memory layout of one CTA.
template <typename Cfg>
struct Fa3Smem {
  std::uint32_t base;  // 1024-aligned
  __device__ __forceinline__ std::uint32_t q_tile() const { return base + Cfg::q_offset; }
  __device__ __forceinline__ std::uint32_t k_tile(int slot) const {
    return base + Cfg::k_offset + slot * Cfg::kv_tile_bytes;
  }
  __device__ __forceinline__ std::uint32_t v_tile(int slot) const {
    return base + Cfg::v_offset + slot * Cfg::kv_tile_bytes;
  }
  __device__ __forceinline__ std::uint32_t q_full() const { return base + Cfg::barrier_offset; }
  __device__ __forceinline__ std::uint32_t k_full(int slot) const {
    return q_full() + 8 * (1 + slot);
  }
  __device__ __forceinline__ std::uint32_t v_full(int slot) const {
    return q_full() + 8 * (1 + Cfg::stages + slot);
  }
  __device__ __forceinline__ std::uint32_t k_empty(int slot) const {
    return q_full() + 8 * (1 + 2 * Cfg::stages + slot);
  }
  __device__ __forceinline__ std::uint32_t v_empty(int slot) const {
    return q_full() + 8 * (1 + 3 * Cfg::stages + slot);
  }
};

// The producer thread: Q once, then each K/V block into slot block % stages,
// K once the consumers have released that slot's previous K (after its S),
// V once they have released its previous V (after its P V).
template <typename Cfg>
__device__ __forceinline__ void produce(const Fa3Smem<Cfg>& smem, const CUtensorMap* q_map,
                                        const CUtensorMap* k_map, const CUtensorMap* v_map,
                                        const Fa3Work& work) {
  constexpr int q_box_bytes = Cfg::br * wgmma::swizzle_row_bytes;
  constexpr int kv_box_bytes = Cfg::bc * wgmma::swizzle_row_bytes;
  const int head = static_cast<int>(work.head);
  tma::arrive_expect_bytes(smem.q_full(), Cfg::q_bytes);
#pragma unroll
  for (int c = 0; c < Cfg::column_blocks; ++c) {
    tma::load_box_3d(smem.q_tile() + c * q_box_bytes, q_map, smem.q_full(),
                     c * wgmma::block_columns, work.q0, head);
  }
  for (int block = 0; block < work.kv_blocks; ++block) {
    const int slot = block % Cfg::stages;
    const auto round = static_cast<std::uint32_t>(block / Cfg::stages);
    tma::wait(smem.k_empty(slot), (round & 1u) ^ 1u);
    tma::arrive_expect_bytes(smem.k_full(slot), Cfg::kv_tile_bytes);
#pragma unroll
    for (int c = 0; c < Cfg::column_blocks; ++c) {
      tma::load_box_3d(smem.k_tile(slot) + c * kv_box_bytes, k_map, smem.k_full(slot),
                       c * wgmma::block_columns, block * Cfg::bc, work.kv_head);
    }
    tma::wait(smem.v_empty(slot), (round & 1u) ^ 1u);
    tma::arrive_expect_bytes(smem.v_full(slot), Cfg::kv_tile_bytes);
#pragma unroll
    for (int c = 0; c < Cfg::column_blocks; ++c) {
      tma::load_box_3d(smem.v_tile(slot) + c * kv_box_bytes, v_map, smem.v_full(slot),
                       c * wgmma::block_columns, block * Cfg::bc, work.kv_head);
    }
  }
}

// The running softmax state of a thread's two rows (l/4 and l/4 + 8 of its
// warp's 16): raw-score maxima and this thread's share of each row's sum.
struct RowState {
  float max[2] = {-INFINITY, -INFINITY};
  float sum[2] = {0.f, 0.f};
};

// The max of a thread's scores of row half h (accumulator elements with
// (i / 2) % 2 == h), over the quad that shares the row.
template <int count>
__device__ __forceinline__ float row_max_of(const float (&s)[count], int h) {
  float partial[count / 4];
#pragma unroll
  for (int j = 0; j < count / 4; ++j) partial[j] = fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]);
  return fa2::quad_max(fa2::max_tree<count / 8>(partial));
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
#pragma unroll
  for (int i = 0; i < Cfg::s_values; ++i) {
    const int h = (i / 2) % 2;
    s[i] = fa2::exp2_approx(fmaf(s[i], scale_log2, -base[h]));
    rows.sum[h] += s[i];
  }
}

// P's A operand of K step `step` from the accumulator it was computed in.
template <typename T, int count>
__device__ __forceinline__ void pack_p_step(const float (&p)[count], int step,
                                            std::uint32_t (&a)[4]) {
#pragma unroll
  for (int reg = 0; reg < 4; ++reg) {
    a[reg] = fa2::pack_pair<T>(p[wgmma::p_source_index(step, reg, 0)],
                               p[wgmma::p_source_index(step, reg, 1)]);
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
    inverse[h] = 1.f / total;  // total >= 1: the row max contributes 2^0
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
#pragma unroll
  for (int step = 0; step < Cfg::qk_steps; ++step) {
    // Q's column blocks are Br rows apart; this warpgroup's rows start 64
    // rows into each.
    const std::uint64_t a = wgmma::encode(wgmma::k_major_operand(q_rows, Cfg::br, step));
    const std::uint64_t b = wgmma::encode(wgmma::k_major_operand(k_tile, Cfg::bc, step));
    wgmma::mma_ss_n128<T>(s, a, b, step > 0 ? 1 : 0);
  }
  wgmma::commit_group();
}

// Issues O += P V over the V tile in `slot` as one wgmma batch.
template <typename T, typename Cfg>
__device__ __forceinline__ void issue_pv(float (&o_acc)[Cfg::o_values],
                                         const std::uint32_t (&p)[Cfg::pv_steps][4],
                                         std::uint32_t v_tile) {
#pragma unroll
  for (int step = 0; step < Cfg::pv_steps; ++step) {
    const std::uint64_t b = wgmma::encode(wgmma::mn_major_operand(v_tile, Cfg::bc, step));
    wgmma::mma_rs<T, Cfg::head_dim>(o_acc, p[step], b, 1);
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
  for (int step = 0; step < Cfg::pv_steps; ++step) pack_p_step<T>(s, step, p[step]);
}

// FA3's inter-warpgroup ping-pong (§3.1): the two consumers take turns to
// issue their wgmma batches, each waiting on its own named barrier and then
// signalling the other's, so one's softmax runs while the other's matmuls do.
// Consumer 0 goes first (consumer 1 signals it once at the start), and
// consumer 1's signal after its last batch is left out: every barrier then
// meets as often as it is waited on.
template <typename Cfg>
struct MatmulTurns {
  int consumer;
  __device__ __forceinline__ void start() const {
    if (consumer == 1) signal_other();
  }
  __device__ __forceinline__ void begin() const {
    if (consumer == 0) {
      tma::named_barrier_sync<1, Cfg::consumer_threads>();
    } else {
      tma::named_barrier_sync<2, Cfg::consumer_threads>();
    }
  }
  __device__ __forceinline__ void end(bool last = false) const {
    if (!(last && consumer == 1)) signal_other();
  }
  __device__ __forceinline__ void signal_other() const {
    if (consumer == 0) {
      tma::named_barrier_arrive<2, Cfg::consumer_threads>();
    } else {
      tma::named_barrier_arrive<1, Cfg::consumer_threads>();
    }
  }
};

// A consumer warpgroup: 64 query rows over every K/V block of the CTA, with
// FA3's intra-warpgroup overlap: block j's S = Q K^T and block j - 1's
// O += P V are issued together, and the softmax of block j runs while P V
// still does (P is packed once P V is done: it reads P's registers). K's
// slot is released when its S is done, V's when its P V is.
template <typename T, typename Cfg>
__device__ __forceinline__ void consume(const Fa3Smem<Cfg>& smem, const Fa3Work& work, int consumer,
                                        T* __restrict__ o, float* __restrict__ lse, int q_len,
                                        int kv_len, bool causal, float scale_log2) {
  const ConsumerRows at{static_cast<int>(threadIdx.x) % wgmma::warpgroup_threads,
                        work.q0 + consumer * Cfg::rows_per_consumer,
                        kv_len,
                        causal,
                        work.shift,
                        scale_log2};
  const std::uint32_t q_rows =
      smem.q_tile() + consumer * Cfg::rows_per_consumer * wgmma::swizzle_row_bytes;
  float o_acc[Cfg::o_values];
#pragma unroll
  for (int i = 0; i < Cfg::o_values; ++i) o_acc[i] = 0.f;
  RowState rows;
  float s[Cfg::s_values];
  std::uint32_t p[Cfg::pv_steps][4];
  float rescale[2];
  const MatmulTurns<Cfg> turns{consumer};
  turns.start();
  tma::wait(smem.q_full(), 0);

  turns.begin();
  tma::wait(smem.k_full(0), 0);
  wgmma::fence();
  issue_scores<T, Cfg>(s, q_rows, smem.k_tile(0));
  turns.end();
  wgmma::wait_group<0>();
  wgmma::fence_operands(s);
  tma::arrive(smem.k_empty(0));
  scores_to_p<Cfg>(s, 0, at, rows, rescale);  // O is 0: its rescale is moot
  pack_p<T, Cfg>(s, p);

  for (int block = 1; block < work.kv_blocks; ++block) {
    const int slot = block % Cfg::stages;
    const auto parity = static_cast<std::uint32_t>(block / Cfg::stages) & 1u;
    const int previous = (block - 1) % Cfg::stages;
    const auto previous_parity = static_cast<std::uint32_t>((block - 1) / Cfg::stages) & 1u;
    wgmma::fence_operands(p);
    turns.begin();
    tma::wait(smem.k_full(slot), parity);
    wgmma::fence();  // P was packed from the registers S is about to take
    issue_scores<T, Cfg>(s, q_rows, smem.k_tile(slot));
    // O is idle (the last P V was waited for): its rescale overlaps S.
    rescale_output(o_acc, rescale);
    wgmma::fence_operands(o_acc);
    tma::wait(smem.v_full(previous), previous_parity);
    wgmma::fence();  // O was rescaled; a wgmma after a branch needs its own fence
    issue_pv<T, Cfg>(o_acc, p, smem.v_tile(previous));
    turns.end();
    wgmma::wait_group<1>();  // S is done; P V may still run
    wgmma::fence_operands(s);
    tma::arrive(smem.k_empty(slot));
    scores_to_p<Cfg>(s, block, at, rows, rescale);
    wgmma::wait_group<0>();  // P V is done with the registers of P
    wgmma::fence_operands(o_acc);
    tma::arrive(smem.v_empty(previous));
    pack_p<T, Cfg>(s, p);
  }

  const int last = work.kv_blocks - 1;
  rescale_output(o_acc, rescale);
  tma::wait(smem.v_full(last % Cfg::stages), static_cast<std::uint32_t>(last / Cfg::stages) & 1u);
  wgmma::fence_operands(o_acc);
  wgmma::fence_operands(p);
  turns.begin();
  wgmma::fence();
  issue_pv<T, Cfg>(o_acc, p, smem.v_tile(last % Cfg::stages));
  turns.end(true);
  wgmma::wait_group<0>();
  wgmma::fence_operands(o_acc);
  tma::arrive(smem.v_empty(last % Cfg::stages));
  store_output<T, Cfg>(o_acc, rows, at.thread, at.first_row, o, lse, work.head, q_len, scale_log2);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, 1)
    fa3_wgmma_forward(const __grid_constant__ CUtensorMap q_map,
                      const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, T* __restrict__ o,
                      float* __restrict__ lse, int q_len, int kv_len, int heads_per_kv_head,
                      bool causal, float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_bytes[];
  const auto raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_bytes));
  const Fa3Smem<Cfg> smem{(raw + wgmma::swizzle_atom_bytes - 1) &
                          ~static_cast<std::uint32_t>(wgmma::swizzle_atom_bytes - 1)};
  const Fa3Work work = work_of_cta<Cfg>(q_len, kv_len, heads_per_kv_head, causal);
  const int warpgroup = static_cast<int>(threadIdx.x) / wgmma::warpgroup_threads;

  if (threadIdx.x == 0) {
    tma::prefetch_tensor_map(&q_map);
    tma::prefetch_tensor_map(&k_map);
    tma::prefetch_tensor_map(&v_map);
    tma::barrier_init(smem.q_full(), 1);
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
    if (threadIdx.x == 0) produce<Cfg>(smem, &q_map, &k_map, &v_map, work);
    return;
  }
  tma::claim_registers<Cfg::consumer_registers>();
  consume<T, Cfg>(smem, work, warpgroup - 1, o, lse, q_len, kv_len, causal, scale_log2);
#else
  (void)q_map;
  (void)k_map;
  (void)v_map;
  (void)o;
  (void)lse;
  (void)q_len;
  (void)kv_len;
  (void)heads_per_kv_head;
  (void)causal;
  (void)scale_log2;
  __trap();  // built only for sm_90a (kernels/meson.build's arch_specific)
#endif
}

}  // namespace cfr::kernels::fa3
