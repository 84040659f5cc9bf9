#pragma once

// fa3_bwd's main launch (kernels/fa3_backward.cu registers it; the variant
// tool tests/gpu/fa2bwd_variants times its knobs): the backward's products on
// sm_90a's wgmma, FlashAttention-3's structure without its warp
// specialization yet. It shares fa2_bwd's pre-pass (D, the zeroed dQ
// accumulator), its convert pass, workspace, launch and GQA stream
// (kernels/fa2_backward.cuh), so it differs from fa2_bwd only where the
// tensor work is.
//
// Why: fa2_bwd_2d's five products run on mma.sync, which tops out at 595-650
// TFLOP/s on Hopper, and it stays 11-19 % behind torch's flash backward
// (docs/perf-notes.md, issue 19); wgmma reads its operands from shared
// memory itself, so the ldmatrix traffic that binds fa2_bwd_2d goes away.
//
// A CTA owns Bc = 128 keys of one head, 64 per consumer warpgroup, and streams
// the Q blocks of Br rows that see them (a cp.async double buffer of Q, dO and
// their LSE and D, every thread loading). Per Q block each warpgroup:
//   S^T = K_w Q^T and dP^T = V_w dO^T   wgmma, A and B K-major in shared
//                                      memory, M = its 64 keys, N = Br;
//   P^T = 2^(S^T scale_log2 - LSE_log2) in registers (the accumulator of S^T
//     is the A fragment of the next products: fa3_wgmma's P V trick);
//   dV += P^T dO                       wgmma, A from registers, B = dO
//                                      MN-major (transposed read);
//   dS^T = P^T (dP^T - D), packed, stored to shared memory [Bc keys][Br
//   rows]; dK += dS^T Q as dV; after a barrier over both warpgroups,
//   dQ = dS K over all Bc keys: A = dS and B = K both MN-major;
//     at d 128 (Br 64) warpgroup w takes d's column block w, at d 64
//     (Br 128) the Q block's rows 64 w.. ; added to the fp32 accumulator
//     with sm_90's two-wide atomics.
// Tiles are in the 128-byte swizzle wgmma reads (kernels/wgmma_layout.hpp),
// written by cp.async, so a fence.proxy.async orders them before the async
// proxy reads them; the same for dS^T's shared-memory stores.

#include <cstdint>

#include "kernels/async_copy.cuh"
#include "kernels/fa2_backward.cuh"
#include "kernels/wgmma.cuh"
#include "kernels/wgmma_layout.hpp"

namespace cfr::kernels::fa3_bwd {

// bulk_dq: each warpgroup's 64 x 64 block of dQ goes through shared memory
// and reaches the fp32 accumulator as one bulk reduction (cp.reduce.async.bulk
// .add.f32) a row of 64 values, issued by 64 threads, instead of 16 two-wide
// atomics a thread (4096 a CTA and Q block): Nsight Compute put fa3_bwd's
// warps in lg_throttle (the global-memory instruction queue full) 12-13 % of
// their stalls (docs/perf-notes.md, "fa3_bwd").
template <int HeadDim, int Br, bool BulkDq = false>
struct BwdWgmmaConfig {
  static_assert((HeadDim == 128 && Br == 64) || (HeadDim == 64 && Br == 128),
                "dQ's 64 x 64 blocks: d's column block per warpgroup at d 128, a 64-row "
                "half of the Q block at d 64");
  static constexpr int head_dim = HeadDim;
  static constexpr int br = Br;   // Q rows per streamed block
  static constexpr int bc = 128;  // keys per CTA
  static constexpr int consumers = 2;
  static constexpr int keys_per_consumer = bc / consumers;  // wgmma's M
  static constexpr int warps = 8;
  static constexpr int threads = warps * 32;
  static constexpr int min_ctas_per_sm = 1;
  static constexpr int stages = 2;
  // fa2_bwd's launch orders: the pre-pass and convert passes are its own.
  static constexpr GridOrder prepass_order = fa2_backward_kernel.launches[0].order;
  static constexpr GridLaunch main_launch = fa2_backward_kernel.launches[1];
  static constexpr GridOrder main_order = main_launch.order;
  static constexpr GridOrder main_causal_order = grid_order_for(main_launch, true);
  static constexpr GridOrder convert_order = fa2_backward_kernel.launches[2].order;

  static constexpr int row_bytes = head_dim * 2;
  static constexpr int chunks_per_row = head_dim / 8;
  static constexpr int kv_tile_bytes = bc * row_bytes;
  static constexpr int q_tile_bytes = br * row_bytes;
  static constexpr int ds_bytes = bc * br * 2;  // dS^T: [bc keys][br rows]
  static constexpr int k_offset = 0;
  static constexpr int v_offset = k_offset + kv_tile_bytes;
  static constexpr int q_offset = v_offset + kv_tile_bytes;
  static constexpr int do_offset = q_offset + stages * q_tile_bytes;
  static constexpr int ds_offset = do_offset + stages * q_tile_bytes;
  static constexpr int stats_offset = ds_offset + ds_bytes;  // [stage][LSE br, D br]
  static constexpr bool bulk_dq = BulkDq;
  // bulk_dq's staging rows: 64 fp32 and 16 bytes of padding, so the 8 rows
  // a warp's accumulator store touches start 4 banks apart.
  static constexpr int dq_row_floats = 68;
  static constexpr int dq_offset = stats_offset + 2 * stages * br * 4;
  static constexpr int dq_stage_bytes = bulk_dq ? consumers * 64 * dq_row_floats * 4 : 0;
  static constexpr int smem_bytes = dq_offset + dq_stage_bytes;

  static constexpr int d_steps = head_dim / wgmma::k_step;  // K steps of S^T, dP^T
  static constexpr int r_steps = br / wgmma::k_step;        // of dV, dK (query rows)
  static constexpr int c_steps = bc / wgmma::k_step;        // of dQ (keys)
  static constexpr int st_values = br / 2;                  // S^T's accumulator a thread
  static constexpr int kv_values = head_dim / 2;            // dK's and dV's
  static constexpr int dq_values = 32;                      // a 64 x 64 block of dQ

  static_assert(threads >= 2 * br, "one thread per LSE and per D value of a block");
  static_assert(kv_tile_bytes % 1024 == 0 && q_tile_bytes % 1024 == 0 && ds_bytes % 1024 == 0,
                "tiles start on the swizzle's 1024-byte period");
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void fence_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Rows [first_row, first_row + rows) of a head's [seq_len, d] matrix into a
// tile in wgmma's layout (column blocks of 64, 128-byte swizzle); rows past
// seq_len are zero-filled.
template <typename T, typename Cfg, int rows>
__device__ __forceinline__ void load_tile(std::uint32_t tile, const T* __restrict__ head,
                                          int first_row, int seq_len) {
  constexpr int chunks = rows * Cfg::chunks_per_row;
  static_assert(chunks % Cfg::threads == 0);
#pragma unroll
  for (int pass = 0; pass < chunks / Cfg::threads; ++pass) {
    const int chunk = pass * Cfg::threads + static_cast<int>(threadIdx.x);
    const int row = chunk / Cfg::chunks_per_row;
    const int column = (chunk % Cfg::chunks_per_row) * 8;
    const bool valid = first_row + row < seq_len;
    const T* src =
        valid ? head + static_cast<std::int64_t>(first_row + row) * Cfg::head_dim + column : head;
    copy_16_bytes_async_shared(tile + wgmma::tile_offset(row, column, rows), src, valid);
  }
}

// acc (=) rows of A times rows of B over d, one wgmma batch: S^T = K_w Q^T,
// dP^T = V_w dO^T.
template <typename T, typename Cfg>
__device__ __forceinline__ void issue_keys_times_rows(float (&acc)[Cfg::st_values],
                                                      std::uint32_t key_rows,
                                                      std::uint32_t query_rows) {
  wgmma::issue_k_major<T, Cfg::br, Cfg::d_steps>(acc, key_rows, Cfg::bc, query_rows, Cfg::br);
  wgmma::commit_group();
}

// acc += A Y over the Q block's rows, one wgmma batch, A from registers (P^T
// or dS^T), Y a [br, d] tile read MN-major (dO or Q): dV, dK.
template <typename T, typename Cfg>
__device__ __forceinline__ void issue_over_rows(float (&acc)[Cfg::kv_values],
                                                const std::uint32_t (&a)[Cfg::r_steps][4],
                                                std::uint32_t y_tile) {
  wgmma::issue_register_a<T, Cfg::head_dim, Cfg::r_steps>(acc, a, y_tile, Cfg::br);
  wgmma::commit_group();
}

template <typename T, int steps, int values>
__device__ __forceinline__ void pack_a(const float (&acc)[values], std::uint32_t (&a)[steps][4]) {
#pragma unroll
  for (int step = 0; step < steps; ++step) wgmma::pack_a_step<T>(acc, step, a[step]);
}

template <typename T>
__device__ __forceinline__ float2 unpack_pair(std::uint32_t packed) {
  if constexpr (wgmma::is_bf16<T>) {
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&packed));
  } else {
    return __half22float2(*reinterpret_cast<const __half2*>(&packed));
  }
}

// A warpgroup's 64 x 64 block of dQ (its wgmma accumulator) added to the
// fp32 accumulator at `out` (the block's first row and column; rows `d`
// floats apart; `rows` of them inside the sequence): the block to its
// staging rows in shared memory, then one bulk reduction a row, issued by
// the warpgroup's first 64 threads. The staging rows are free again once the
// previous block's reductions have read them (wait_group.read).
template <typename Cfg>
__device__ __forceinline__ void add_dq_in_bulk(const float (&dq)[Cfg::dq_values],
                                               unsigned char* smem, std::uint32_t base,
                                               int consumer, int thread, int acc_row, int acc_col,
                                               float* out, int rows) {
  constexpr int row_bytes = Cfg::dq_row_floats * 4;
  const int stage_offset = Cfg::dq_offset + consumer * 64 * row_bytes;
  float* stage = reinterpret_cast<float*>(smem + stage_offset);
  if (thread < 64) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
#pragma unroll
  for (int i = 0; i < Cfg::dq_values; i += 2) {
    const int row = acc_row + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + acc_col;
    *reinterpret_cast<float2*>(stage + row * Cfg::dq_row_floats + col) =
        make_float2(dq[i], dq[i + 1]);
  }
  fence_async_proxy();  // the generic stores, before the bulk copy reads them
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
  if (thread < 64) {
    if (thread < rows) {
      asm volatile(
          "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 256;\n" ::"l"(
              out + static_cast<std::int64_t>(thread) * Cfg::head_dim),
          "r"(base + static_cast<std::uint32_t>(stage_offset + thread * row_bytes))
          : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// `grouped`: GQA, heads_per_kv_head (G > 1) query heads a K/V head, streamed
// as fa2_bwd streams them (fa2_bwd::QBlockStream: from the last Q block down,
// the group's heads within each), so dK and dV sum over the group in the
// same registers; square self-attention runs grouped = false, where
// heads_per_kv_head is not read.
template <typename T, typename Cfg, bool grouped>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_ctas_per_sm)
    fa3_backward_main(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                      const T* __restrict__ d_o, const float* __restrict__ lse,
                      const float* __restrict__ d_rows, float* __restrict__ dq_accum,
                      T* __restrict__ d_k, T* __restrict__ d_v, int q_len, int kv_len,
                      int heads_per_kv_head, bool causal, float scale, float scale_log2) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) unsigned char smem[];
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t k_tile = base + Cfg::k_offset;
  const std::uint32_t v_tile = base + Cfg::v_offset;
  const std::uint32_t ds_tile = base + Cfg::ds_offset;
  float* stats = reinterpret_cast<float*>(smem + Cfg::stats_offset);

  const int consumer = static_cast<int>(threadIdx.x) / wgmma::warpgroup_threads;
  const int thread = static_cast<int>(threadIdx.x) % wgmma::warpgroup_threads;
  const int lane = thread % 32;
  // The accumulator's rows of this thread: 16 w + lane / 4 (+ 8) of the
  // warpgroup's 64; its columns 8 j + 2 (lane % 4) (+ 1).
  const int acc_row = 16 * (thread / 32) + lane / 4;
  const int acc_col = 2 * (lane % 4);

  const fa2_bwd::KvBlockWork work =
      fa2_bwd::kv_block_work<Cfg, grouped>(q_len, kv_len, causal, heads_per_kv_head);
  // Only its step arithmetic (which Q block of which query head a step is):
  // the tiles here are in wgmma's layout, loaded by load_tile below.
  const fa2_bwd::QBlockStream<T, Cfg, grouped> stream{
      base, stats, q, d_o, lse, d_rows, work, q_len, heads_per_kv_head, causal};
  const int first_key = work.c0 + consumer * Cfg::keys_per_consumer;  // this warpgroup's
  // Step `index`'s Q and dO tiles into `stage`, and this thread's share of
  // its LSE and D (the first 2 Br threads'), which the caller stores.
  const auto load_step = [&](int index, int stage) {
    const std::int64_t offset = stream.q_offset_of(index);
    const std::int64_t row0 = stream.row0_of(index);
    const int q0 = stream.block_of(index) * Cfg::br;
    load_tile<T, Cfg, Cfg::br>(base + Cfg::q_offset + stage * Cfg::q_tile_bytes, q + offset, q0,
                               q_len);
    load_tile<T, Cfg, Cfg::br>(base + Cfg::do_offset + stage * Cfg::q_tile_bytes, d_o + offset, q0,
                               q_len);
    return fa2_bwd::stat_of<Cfg>(lse + row0, d_rows + row0, q0, q_len);
  };

  load_tile<T, Cfg, Cfg::bc>(k_tile, k + work.kv_offset, work.c0, kv_len);
  load_tile<T, Cfg, Cfg::bc>(v_tile, v + work.kv_offset, work.c0, kv_len);
  {
    const float stat = load_step(stream.first_step(), 0);
    commit_async_copies();
    if (threadIdx.x < 2 * Cfg::br) stats[threadIdx.x] = stat;
  }

  float dk[Cfg::kv_values];
  float dv[Cfg::kv_values];
#pragma unroll
  for (int i = 0; i < Cfg::kv_values; ++i) dk[i] = dv[i] = 0.f;
  // This warpgroup's 64 keys of K and V: 64 rows into each column block.
  const std::uint32_t k_rows =
      k_tile + consumer * Cfg::keys_per_consumer * wgmma::swizzle_row_bytes;
  const std::uint32_t v_rows =
      v_tile + consumer * Cfg::keys_per_consumer * wgmma::swizzle_row_bytes;
  // dQ's 64 x 64 block: A = dS's column block (query rows) and B = K's (d).
  constexpr int block_bytes = Cfg::bc * wgmma::swizzle_row_bytes;
  const std::uint32_t dq_a = ds_tile + (Cfg::head_dim == 64 ? consumer * block_bytes : 0);
  const std::uint32_t dq_b = k_tile + (Cfg::head_dim == 128 ? consumer * block_bytes : 0);
  const int dq_row0 = Cfg::head_dim == 64 ? consumer * 64 : 0;
  const int dq_col0 = Cfg::head_dim == 128 ? consumer * 64 : 0;

  for (int index = stream.first_step(); index < stream.steps(); ++index) {
    const int stage = (index - stream.first_step()) % Cfg::stages;
    const bool has_next = index + 1 < stream.steps();
    wait_async_copies<0>();
    fence_async_proxy();  // cp.async's writes, before wgmma reads them
    __syncthreads();      // every thread's copies; the other stage and dS^T are free
    const float next_stat = has_next ? load_step(index + 1, stage ^ 1) : 0.f;
    commit_async_copies();

    const int q0 = stream.block_of(index) * Cfg::br;
    // GQA: the step's query head's accumulator, found here rather than held
    // through the products.
    float* dq_head = dq_accum + stream.q_offset_of(index);
    if constexpr (grouped) {
      // Held in a register: left to the compiler, the grouped d 128 kernel
      // recomputed it at each of its 16 atomics, with the step's head
      // (index % G) in 64 bits, 14 divisions a step (ptxas; 1.6x the time of
      // the square kernel on the same FLOPs, docs/perf-notes.md "fa3_bwd").
      asm volatile("" : "+l"(dq_head));
    }
    const std::uint32_t q_tile = base + Cfg::q_offset + stage * Cfg::q_tile_bytes;
    const std::uint32_t do_tile = base + Cfg::do_offset + stage * Cfg::q_tile_bytes;
    const float* lse_log2 = stats + stage * 2 * Cfg::br;
    const float* d_block = lse_log2 + Cfg::br;

    float st[Cfg::st_values];
    float dpt[Cfg::st_values];
    wgmma::fence();
    issue_keys_times_rows<T, Cfg>(st, k_rows, q_tile);
    issue_keys_times_rows<T, Cfg>(dpt, v_rows, do_tile);
    wgmma::wait_group<1>();  // S^T
    wgmma::fence_operands(st);

    // P^T, masked where a key is past kv_len or right of a row's diagonal,
    // or a row is past q_len.
    const bool masked = q0 + Cfg::br > q_len || first_key + Cfg::keys_per_consumer > kv_len ||
                        (causal && first_key + Cfg::keys_per_consumer - 1 > q0 + work.shift);
#pragma unroll
    for (int i = 0; i < Cfg::st_values; ++i) {
      const int col = 8 * (i / 4) + acc_col + (i % 2);
      st[i] = fa2::exp2_approx(fmaf(st[i], scale_log2, -lse_log2[col]));
    }
    if (masked) {
#pragma unroll
      for (int i = 0; i < Cfg::st_values; ++i) {
        fa2_bwd::mask_entry(st[i], first_key + acc_row + 8 * ((i / 2) % 2),
                            q0 + 8 * (i / 4) + acc_col + (i % 2), q_len, kv_len, causal,
                            work.shift);
      }
    }
    std::uint32_t p_a[Cfg::r_steps][4];
    pack_a<T>(st, p_a);
    wgmma::fence_operands(p_a);
    wgmma::fence();
    issue_over_rows<T, Cfg>(dv, p_a, do_tile);
    wgmma::wait_group<1>();  // dP^T (dV may still run)
    wgmma::fence_operands(dpt);

    // dS^T = P^T (dP^T - D), P^T as dV reads it. The PTX ISA makes reading
    // an A register of a wgmma in flight (dV's, here) undefined; ptxas 13.0
    // keeps p_a live and unwritten until the wait (a review scanned every
    // instantiation's SASS for it), and the compliant orders cost either a
    // copy of P (16-32 registers, on kernels at 255 that spill) or dV's
    // overlap with this loop. Recheck on a compiler change.
#pragma unroll
    for (int step = 0; step < Cfg::r_steps; ++step) {
#pragma unroll
      for (int reg = 0; reg < 4; ++reg) {
        const float2 p = unpack_pair<T>(p_a[step][reg]);
        const int i = wgmma::p_source_index(step, reg, 0);
        const int col = 8 * (i / 4) + acc_col;
        dpt[i] = p.x * (dpt[i] - d_block[col]);
        dpt[i + 1] = p.y * (dpt[i + 1] - d_block[col + 1]);
      }
    }
    std::uint32_t ds_a[Cfg::r_steps][4];
    pack_a<T>(dpt, ds_a);
    // dS^T into shared memory for dQ, element (key, row) of [bc][br], before
    // dK's wgmma takes ds_a as its A operand (no read of it in flight).
#pragma unroll
    for (int step = 0; step < Cfg::r_steps; ++step) {
#pragma unroll
      for (int reg = 0; reg < 4; ++reg) {
        const int i = wgmma::p_source_index(step, reg, 0);
        const int key = consumer * Cfg::keys_per_consumer + acc_row + 8 * ((i / 2) % 2);
        const int col = 8 * (i / 4) + acc_col;
        const std::uint32_t address = ds_tile + wgmma::tile_offset(key, col, Cfg::bc);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(ds_a[step][reg]) : "memory");
      }
    }
    wgmma::fence_operands(ds_a);
    wgmma::fence();
    issue_over_rows<T, Cfg>(dk, ds_a, q_tile);
    fence_async_proxy();
    __syncthreads();  // both warpgroups' dS^T

    float dq[Cfg::dq_values];
    wgmma::fence();
    {
      const std::uint64_t a = wgmma::encode(wgmma::mn_major_operand(dq_a, Cfg::bc, 0));
      const std::uint64_t b = wgmma::encode(wgmma::mn_major_operand(dq_b, Cfg::bc, 0));
#pragma unroll
      for (int step = 0; step < Cfg::c_steps; ++step) {
        wgmma::mma_ss_mn_major<T>(dq, a + wgmma::mn_major_step_offset(step),
                                  b + wgmma::mn_major_step_offset(step), step > 0 ? 1 : 0);
      }
    }
    wgmma::commit_group();
    wgmma::wait_group<0>();  // dV, dK, dQ
    wgmma::fence_operands(dq);
    wgmma::fence_operands(dk);
    wgmma::fence_operands(dv);
    if constexpr (Cfg::bulk_dq) {
      add_dq_in_bulk<Cfg>(
          dq, smem, base, consumer, thread, acc_row, acc_col,
          dq_head + static_cast<std::int64_t>(q0 + dq_row0) * Cfg::head_dim + dq_col0,
          q_len - q0 - dq_row0);
    } else {
#pragma unroll
      for (int i = 0; i < Cfg::dq_values; i += 2) {
        const int row = q0 + dq_row0 + acc_row + 8 * ((i / 2) % 2);
        if (row >= q_len) continue;
        float* out = dq_head + static_cast<std::int64_t>(row) * Cfg::head_dim + dq_col0 +
                     8 * (i / 4) + acc_col;
        fa2_bwd::add_pair<true>(out, dq[i], dq[i + 1]);
      }
    }
    if (has_next && threadIdx.x < 2 * Cfg::br) {
      stats[(stage ^ 1) * 2 * Cfg::br + threadIdx.x] = next_stat;
    }
  }

  if constexpr (Cfg::bulk_dq) {
    // The last reductions read their staging rows before the CTA's shared
    // memory goes.
    if (thread < 64) asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  }
#pragma unroll
  for (int i = 0; i < Cfg::kv_values; i += 2) {
    const int key = first_key + acc_row + 8 * ((i / 2) % 2);
    if (key >= kv_len) continue;
    const std::int64_t at =
        work.kv_offset + static_cast<std::int64_t>(key) * Cfg::head_dim + 8 * (i / 4) + acc_col;
    *reinterpret_cast<std::uint32_t*>(d_k + at) =
        fa2::pack_pair<T>(dk[i] * scale, dk[i + 1] * scale);
    *reinterpret_cast<std::uint32_t*>(d_v + at) = fa2::pack_pair<T>(dv[i], dv[i + 1]);
  }
#endif  // without sm_90a it writes nothing, so a check of its outputs fails
}

// Square self-attention launches the square instantiation, GQA the grouped one.
template <typename T, typename Cfg>
cudaError_t launch_fa3_backward_config(const AttentionShape& shape, const BackwardBuffers& io,
                                       const LaunchContext& context) {
  if (shape.key_heads() == shape.heads) {
    return fa2_bwd::launch_fa2_backward_with<T, Cfg>(fa3_backward_main<T, Cfg, false>, shape, io,
                                                     context);
  }
  return fa2_bwd::launch_fa2_backward_with<T, Cfg>(fa3_backward_main<T, Cfg, true>, shape, io,
                                                   context);
}

}  // namespace cfr::kernels::fa3_bwd
