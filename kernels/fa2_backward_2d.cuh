#pragma once

// fa2_bwd's main launch with FlashAttention-2's own warp tiling (a variant of
// kernels/fa2_backward.cuh's, which it shares the pre-pass, the convert pass,
// the workspace and the launch with; tests/gpu/fa2bwd_variants times the two),
// registered as fa2_bwd_2d (kernels/fa2_backward_2d.cu, its catalog entry
// fa2_backward_2d_kernel).
//
// fa2_backward_main gives each warp 16 keys and all Br query rows, so that
// P^T and dS^T are already the A operands of dV and dK; the price is that
// every warp reads the whole Q and dO tiles twice, which Nsight Compute shows
// as the busiest pipe (docs/perf-notes.md, "What limits fa2_bwd"). Here the
// three products each tile their output 2-D over the warps, and P and dS go
// through shared memory once:
//   S = Q K^T and dP = dO V^T over [Br, Bc] (STiling: SWarpsM warps along
//     the query rows); P = 2^(S * scale_log2 - LSE_log2), dS = P * (dP - D)
//     in registers, both stored to shared memory [Br, Bc] in the I/O dtype;
//   dV += P^T dO and dK += dS^T Q over [Bc, d] (KvTiling: KvWarpsN along the
//     keys; with BwdTuning::split_kv each over half the warps, dV on the
//     first half, dK on the second, or the reverse with dq_on_dv_warps),
//     P^T and dS^T read back with ldmatrix.trans;
//   dQ = dS K over [Br, d] (QTiling: QWarpsM along the rows; with
//     dq_on_dv_warps over the dV half alone), added to the fp32 accumulator
//     with atomics as before.
// Per warp and k16 step the A fragments of two m16 tiles serve every n8 tile
// and the B fragments serve both m16 tiles, where the 16-key strip reloads B
// for every 8 mma.

#include "kernels/fa2_backward.cuh"

namespace cfr::kernels::fa2_bwd {

// A [Rows, Cols] output tiled over Warps warps, WarpsAlongRows of them along
// the rows: each warp's block is [rows, cols], m_tiles m16 by n_tiles n8.
template <int Rows, int Cols, int WarpsAlongRows, int Warps>
struct WarpTiling {
  static constexpr int rows = Rows / WarpsAlongRows;
  static constexpr int cols = Cols / (Warps / WarpsAlongRows);
  static constexpr int m_tiles = rows / 16;
  static constexpr int n_tiles = cols / 8;
  static constexpr int tiles = m_tiles * n_tiles;  // accumulator fragments a warp
  static_assert(Warps % WarpsAlongRows == 0);
  static_assert(rows % 16 == 0 && cols % 16 == 0, "blocks of whole x4 loads");
  __device__ static int row0(int warp) { return (warp % WarpsAlongRows) * rows; }
  __device__ static int col0(int warp) { return (warp / WarpsAlongRows) * cols; }
};

template <int HeadDim, int Br, int Bc, int Warps, int SWarpsM, int KvWarpsN, int QWarpsM,
          BwdTuning Tuning = BwdTuning{}>
struct Bwd2dConfig {
  static constexpr BwdTuning tuning = Tuning;
  static constexpr int head_dim = HeadDim;
  static constexpr int br = Br;
  static constexpr int bc = Bc;
  static constexpr int warps = Warps;
  static constexpr int threads = warps * 32;
  static constexpr int min_ctas_per_sm = 1;
  static constexpr int stages = 2;
  // fa2_bwd_2d's launch orders (the catalog's fa2_backward_launches, fa2_bwd's).
  static constexpr GridOrder prepass_order = fa2_backward_2d_kernel.launches[0].order;
  static constexpr GridLaunch main_launch = fa2_backward_2d_kernel.launches[1];
  static constexpr GridOrder main_order = main_launch.order;
  static constexpr GridOrder main_causal_order = grid_order_for(main_launch, true);
  static constexpr GridOrder convert_order = fa2_backward_2d_kernel.launches[2].order;

  static constexpr int row_bytes = head_dim * 2;
  static constexpr int chunks_per_row = head_dim / 8;

  using STiling = WarpTiling<br, bc, SWarpsM, warps>;  // S and dP: query rows x keys
  // Warps over which each of dK and dV is tiled (BwdTuning::split_kv: half
  // of them dV, the other half dK).
  static constexpr int kv_warps = tuning.split_kv ? warps / 2 : warps;
  static_assert(!tuning.split_kv || warps % 2 == 0, "split_kv halves the warps");
  using KvTiling = WarpTiling<bc, head_dim, KvWarpsN, kv_warps>;  // dK and dV: keys x d
  // Warps over which dQ is tiled (BwdTuning::dq_on_dv_warps: the dV half).
  static constexpr int q_warps = tuning.dq_on_dv_warps ? warps / 2 : warps;
  static_assert(!tuning.dq_on_dv_warps || tuning.split_kv,
                "dq_on_dv_warps names split_kv's dV half");
  using QTiling = WarpTiling<br, head_dim, QWarpsM, q_warps>;  // dQ: query rows x d

  static constexpr int d_steps = head_dim / 16;  // k16 steps of S and dP
  static constexpr int r_steps = br / 16;        // k16 steps of dV and dK (query rows)
  static constexpr int c_steps = bc / 16;        // k16 steps of dQ (keys)

  using PLayout = RowLayout<bc * 2>;  // P and dS: [br][bc] elements
  static constexpr int kv_tile_bytes = bc * row_bytes;
  static constexpr int q_tile_bytes = br * row_bytes;
  static constexpr int p_bytes = br * PLayout::row_bytes;
  static constexpr int k_offset = 0;
  static constexpr int v_offset = k_offset + kv_tile_bytes;
  static constexpr int q_offset = v_offset + kv_tile_bytes;
  static constexpr int do_offset = q_offset + stages * q_tile_bytes;
  static constexpr int p_offset = do_offset + stages * q_tile_bytes;
  static constexpr int ds_offset = p_offset + p_bytes;
  static constexpr int stats_offset = ds_offset + p_bytes;
  static constexpr int smem_bytes = stats_offset + 2 * stages * br * 4;

  static_assert(head_dim % 32 == 0 && bc % 64 == 0, "rows of 128 bytes or more keep the swizzle");
  static_assert(threads >= 2 * br, "one thread per LSE and per D value of a block");
  static_assert(kv_tile_bytes % 1024 == 0 && q_tile_bytes % 1024 == 0 && p_bytes % 1024 == 0,
                "tiles must start on the swizzle's 1024-byte period");
};

// acc[mt][nt] = A B^T over d for a warp's [16 m_tiles, 8 n_tiles] block of
// S = Q K^T or dP = dO V^T: A rows (query rows) a row-major [rows, d] tile,
// B (keys, the "col" operand) from load_b(step, pair, b): keys 16 * pair +
// 0-7 then 8-15 of k16 step `step`.
template <typename T, typename Cfg, typename LoadB>
__device__ __forceinline__ void rows_times_keys_from(
    float (&acc)[Cfg::STiling::m_tiles][Cfg::STiling::n_tiles][4], std::uint32_t a_tile,
    std::uint32_t a_lane, int a_row0, LoadB load_b) {
  fa2::zero_accumulators(acc);
  constexpr int unroll = Cfg::tuning.d_step_unroll > 0 ? Cfg::tuning.d_step_unroll : Cfg::d_steps;
#pragma unroll unroll
  for (int step = 0; step < Cfg::d_steps; ++step) {
    std::uint32_t a[Cfg::STiling::m_tiles][4];
#pragma unroll
    for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
      ldmatrix_x4(a[mt], x4_address<Cfg>(a_tile, a_lane, a_row0 + 16 * mt, step));
    }
#pragma unroll
    for (int pair = 0; pair < Cfg::STiling::n_tiles / 2; ++pair) {
      std::uint32_t b[4];
      load_b(step, pair, b);
#pragma unroll
      for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
        mma_16x8x16<T>(acc[mt][2 * pair], a[mt], b[0], b[1]);
        mma_16x8x16<T>(acc[mt][2 * pair + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// The same with B a row-major [keys, d] tile in shared memory.
template <typename T, typename Cfg>
__device__ __forceinline__ void rows_times_keys(
    float (&acc)[Cfg::STiling::m_tiles][Cfg::STiling::n_tiles][4], std::uint32_t a_tile,
    std::uint32_t a_lane, int a_row0, std::uint32_t b_tile, std::uint32_t b_lane, int b_row0) {
  rows_times_keys_from<T, Cfg>(
      acc, a_tile, a_lane, a_row0, [&](int step, int pair, std::uint32_t(&b)[4]) {
        ldmatrix_x4(b, x4_address<Cfg>(b_tile, b_lane, b_row0 + 16 * pair, step));
      });
}

// A warp's B fragments of S = Q K^T, every k16 step of d, held in registers
// over the Q blocks (BwdTuning::resident_k); an empty array where the tuning
// does not ask.
template <typename Cfg>
struct ResidentKeys {
  static constexpr int steps = Cfg::tuning.resident_k ? Cfg::d_steps : 0;
  std::uint32_t b[steps > 0 ? steps : 1][Cfg::STiling::n_tiles / 2][4];
  __device__ __forceinline__ void load(std::uint32_t k_tile, std::uint32_t b_lane, int key0) {
#pragma unroll
    for (int step = 0; step < steps; ++step) {
#pragma unroll
      for (int pair = 0; pair < Cfg::STiling::n_tiles / 2; ++pair) {
        ldmatrix_x4(b[step][pair], x4_address<Cfg>(k_tile, b_lane, key0 + 16 * pair, step));
      }
    }
  }
  static_assert(!Cfg::tuning.resident_k || Cfg::tuning.d_step_unroll == 0,
                "registers are indexed by whole unrolled steps");
};

// acc += X^T Y over `k_steps` k16 steps: X a [k, m] tile in `XLayout` read
// transposed (P, dS: rows = query rows = k), Y a row-major [k, n] tile read
// as the k-major B operand (dO, Q, K). The warp's block of acc starts at
// m0 (X's columns) and n0 (Y's columns).
template <typename T, typename Cfg, typename XLayout, typename YLayout, int m_tiles, int n_tiles,
          int k_steps>
__device__ __forceinline__ void transposed_times(float (&acc)[m_tiles][n_tiles][4],
                                                 std::uint32_t x_tile, std::uint32_t x_lane, int m0,
                                                 std::uint32_t y_tile, std::uint32_t y_lane,
                                                 int n0) {
  constexpr int unroll = Cfg::tuning.d_step_unroll > 0 ? Cfg::tuning.d_step_unroll : k_steps;
#pragma unroll unroll
  for (int step = 0; step < k_steps; ++step) {
    std::uint32_t a[m_tiles][4];
#pragma unroll
    for (int mt = 0; mt < m_tiles; ++mt) {
      ldmatrix_x4_trans(a[mt], x4_address<XLayout>(x_tile, x_lane, 16 * step, m0 / 16 + mt));
    }
#pragma unroll
    for (int pair = 0; pair < n_tiles / 2; ++pair) {
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, x4_address<YLayout>(y_tile, y_lane, 16 * step, n0 / 16 + pair));
#pragma unroll
      for (int mt = 0; mt < m_tiles; ++mt) {
        mma_16x8x16<T>(acc[mt][2 * pair], a[mt], b[0], b[1]);
        mma_16x8x16<T>(acc[mt][2 * pair + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// A warp's [16 m_tiles, 8 n_tiles] accumulators into a [rows, cols] tile of
// `Layout` in T, at rows row0.., columns col0..
template <typename T, typename Layout, int m_tiles, int n_tiles>
__device__ __forceinline__ void store_accumulators(std::uint32_t tile,
                                                   const float (&acc)[m_tiles][n_tiles][4],
                                                   int row0, int col0) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int mt = 0; mt < m_tiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < n_tiles; ++nt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row0 + 16 * mt + lane / 4 + 8 * h;
        const std::uint32_t packed = pack_pair<T>(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
        const std::uint32_t address =
            tile + (swizzled(row, col0 / 8 + nt, Layout::row_bytes) | ((lane % 4) * 4));
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(packed) : "memory");
      }
    }
  }
}

// Rows [row0, row0 + 16 m_tiles) and columns [col0, col0 + 8 n_tiles) of a
// [kv_len, d] output from a warp's accumulators times `factor`.
template <typename T, typename Cfg, int m_tiles, int n_tiles>
__device__ __forceinline__ void store_block_rows(T* __restrict__ head,
                                                 const float (&acc)[m_tiles][n_tiles][4], int row0,
                                                 int col0, int kv_len, float factor) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
#pragma unroll
  for (int mt = 0; mt < m_tiles; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 16 * mt + lane / 4 + 8 * h;
      if (row >= kv_len) continue;
      T* out = head + static_cast<std::int64_t>(row) * Cfg::head_dim + col0 + 2 * (lane % 4);
#pragma unroll
      for (int nt = 0; nt < n_tiles; ++nt) {
        *reinterpret_cast<std::uint32_t*>(out + 8 * nt) =
            pack_pair<T>(acc[mt][nt][2 * h] * factor, acc[mt][nt][2 * h + 1] * factor);
      }
    }
  }
}

// BwdTuning::fragment_dq: a whole Q block's accumulator holds each warp's
// fragments one after another, a fragment's 32 lanes' four values
// contiguous, so a warp adds one fragment with one 512-byte atomic. A
// fragment value's place, and back (the convert pass reads float4 j).
struct DqFragment {
  int warp, lane, mt, nt;
};
// In floats from the block's first.
template <typename Cfg>
__host__ __device__ constexpr int fragment_dq_offset(DqFragment f) {
  return ((f.warp * Cfg::QTiling::tiles + f.mt * Cfg::QTiling::n_tiles + f.nt) * 32 + f.lane) * 4;
}
template <typename Cfg>
__host__ __device__ constexpr DqFragment dq_fragment_at(int float4_index) {
  const int fragment = float4_index / 32;
  return {fragment / Cfg::QTiling::tiles, float4_index % 32,
          fragment % Cfg::QTiling::tiles / Cfg::QTiling::n_tiles, fragment % Cfg::QTiling::n_tiles};
}
// Whether the two are inverse over a whole block (static_asserted where a
// config is registered).
template <typename Cfg>
constexpr bool dq_fragment_order_round_trips() {
  for (int j = 0; j < Cfg::br * Cfg::head_dim / 4; ++j) {
    if (fragment_dq_offset<Cfg>(dq_fragment_at<Cfg>(j)) != 4 * j) return false;
  }
  return Cfg::q_warps * Cfg::QTiling::tiles * 32 * 4 == Cfg::br * Cfg::head_dim;
}

// Whether this architecture keeps a fragment-ordered accumulator where the
// tuning asks: sm_90's four-wide atomic is what makes it pay; below it (one
// scalar atomic a value, each a warp's 32 values 16 bytes apart) the
// row-major pairs touch fewer sectors, so those builds keep them. The main
// and convert kernels of one architecture agree, being compiled for it.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ constexpr bool fragment_dq_layout(bool asked) {
  return asked;
}
#else
__device__ constexpr bool fragment_dq_layout(bool /*asked*/) {
  return false;
}
#endif

__device__ __forceinline__ void add_four(float* out, const float (&values)[4]) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(out),
            make_float4(values[0], values[1], values[2], values[3]));
#else
  for (int e = 0; e < 4; ++e) atomicAdd(out + e, values[e]);
#endif
}

// The convert pass of a fragment-ordered accumulator: a whole block's float4
// j holds fragment (mt, nt) of lane l of warp w, rows r and r + 8 of columns
// c and c + 1; a ragged last block is row-major (fa2_backward_convert_dq's).
template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads)
    fa2_backward_convert_dq_fragments(const float* __restrict__ dq_accum, T* __restrict__ d_q,
                                      int q_len, float scale) {
  using QTiling = typename Cfg::QTiling;
  const GridPosition at = grid_position<Cfg::convert_order, GridAxis::q_blocks>();
  const int q0 = at.block * Cfg::br;
  const int rows = min(Cfg::br, q_len - q0);
  const std::int64_t first = (at.head * q_len + q0) * Cfg::head_dim;  // element index
  if (rows < Cfg::br || !fragment_dq_layout(Cfg::tuning.fragment_dq)) {
    convert_row_major<T, Cfg>(dq_accum + first, d_q + first, rows, scale);
    return;
  }
  const auto* src = reinterpret_cast<const float4*>(dq_accum + first);
  for (int j = static_cast<int>(threadIdx.x); j < Cfg::br * Cfg::head_dim / 4; j += Cfg::threads) {
    const DqFragment f = dq_fragment_at<Cfg>(j);
    const int row = QTiling::row0(f.warp) + 16 * f.mt + f.lane / 4;
    const int column = QTiling::col0(f.warp) + 8 * f.nt + 2 * (f.lane % 4);
    const float4 v = src[j];
    const float top[2] = {v.x * scale, v.y * scale};
    const float bottom[2] = {v.z * scale, v.w * scale};
    store_converted<T, 2>(d_q + first + static_cast<std::int64_t>(row) * Cfg::head_dim + column,
                          top);
    store_converted<T, 2>(d_q + first + static_cast<std::int64_t>(row + 8) * Cfg::head_dim + column,
                          bottom);
  }
}

// BwdTuning::barrier_clock's record of one warp of a main-launch CTA: SM
// cycles (clock()) summed over its Q blocks, each part from the clock read
// that ends the part before it. A read comes when the warp issues it, not
// when the work before it completes, so an MMA's latency is counted where
// its result is first needed.
struct WarpClocks {
  unsigned prologue;    // the first wait for K, V and the first Q, dO tiles
  unsigned copy_wait;   // in cp.async's wait at the loop's top, later blocks
  unsigned top_wait;    // at the loop's top barrier
  unsigned scores;      // the next tiles issued; S, P, dP, dS and their stores
  unsigned ds_wait;     // at the barrier after the dS stores
  unsigned dv;          // dV += P^T dO (split_kv: the warp's product, dQ last)
  unsigned dq_mma;      // dQ = dS K
  unsigned dq_atomics;  // its atomics
  unsigned dk;          // dK += dS^T Q and the next block's stats (split_kv:
                        // the stats, and the warp's product when dQ is first)
  unsigned blocks;
};
// [CTA (x fastest, then y, z)][warp]; the variant tool sets it.
static __device__ WarpClocks* warp_clocks_out = nullptr;

template <bool on>
struct WarpClock {
  WarpClocks sums{};
  unsigned last = 0;
  __device__ void start() {
    if constexpr (on) last = clock();
  }
  __device__ void lap(unsigned WarpClocks::*part) {
    if constexpr (on) {
      const unsigned now = clock();
      sums.*part += now - last;
      last = now;
    }
  }
  __device__ void write(int warp, int warps) const {
    if constexpr (on) {
      if (threadIdx.x % 32 != 0 || warp_clocks_out == nullptr) return;
      const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      warp_clocks_out[cta * warps + warp] = sums;
    }
  }
};

// Square self-attention only (launch_fa2_backward_2d_config refuses GQA):
// heads_per_kv_head, fa2_backward_main's parameter for it, is 1.
template <typename T, typename Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_ctas_per_sm)
    fa2_backward_main_2d(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                         const T* __restrict__ d_o, const float* __restrict__ lse,
                         const float* __restrict__ d_rows, float* __restrict__ dq_accum,
                         T* __restrict__ d_k, T* __restrict__ d_v, int q_len, int kv_len,
                         int /*heads_per_kv_head*/, bool causal, float scale, float scale_log2) {
  using PLayout = typename Cfg::PLayout;
  extern __shared__ __align__(1024) unsigned char smem[];
  const auto smem_base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t k_tile = smem_base + Cfg::k_offset;
  const std::uint32_t v_tile = smem_base + Cfg::v_offset;
  const std::uint32_t p_tile = smem_base + Cfg::p_offset;
  const std::uint32_t ds_tile = smem_base + Cfg::ds_offset;
  float* stats = reinterpret_cast<float*>(smem + Cfg::stats_offset);  // [stage][LSE br, D br]

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4;
  const int quad = lane % 4;

  const KvBlockWork work = kv_block_work<Cfg>(q_len, kv_len, causal);
  const int c0 = work.c0;
  const int shift = work.shift;
  float* dq_head = dq_accum + work.q_offset;
  const QBlockStream<T, Cfg> stream{smem_base, stats, q, d_o, lse, d_rows, work, q_len};

  // Each warp's place in the three products' tilings.
  const int s_row0 = Cfg::STiling::row0(warp);  // within the Q block
  const int s_key0 = Cfg::STiling::col0(warp);  // within the K/V block
  const int kv_key0 = Cfg::KvTiling::row0(warp % Cfg::kv_warps);
  const int kv_dim0 = Cfg::KvTiling::col0(warp % Cfg::kv_warps);
  // BwdTuning::split_kv: this warp's one product is dK = dS^T Q (else dV =
  // P^T dO); warp-uniform, so both halves run one instruction stream. dK on
  // the second half, or on the first with dq_on_dv_warps.
  const bool dk_warp = Cfg::tuning.split_kv &&
                       (Cfg::tuning.dq_on_dv_warps ? warp < Cfg::kv_warps : warp >= Cfg::kv_warps);
  // This warp's place among dQ's warps (the dV half's 0-3 with dq_on_dv_warps).
  const int q_warp = Cfg::tuning.dq_on_dv_warps ? warp - Cfg::kv_warps : warp;
  const int q_row0 = Cfg::QTiling::row0(q_warp);
  const int q_dim0 = Cfg::QTiling::col0(q_warp);

  fa2::load_tile<T, Cfg, Cfg::bc>(k_tile, k + work.kv_offset, c0, kv_len);
  fa2::load_tile<T, Cfg, Cfg::bc>(v_tile, v + work.kv_offset, c0, kv_len);
  stream.start(work.first_q_block);

  // dV, or with split_kv this warp's product (dV or dK); dK unused there.
  constexpr int dk_tiles = Cfg::tuning.split_kv ? 1 : Cfg::KvTiling::m_tiles;
  constexpr int dk_n_tiles = Cfg::tuning.split_kv ? 1 : Cfg::KvTiling::n_tiles;
  float dv[Cfg::KvTiling::m_tiles][Cfg::KvTiling::n_tiles][4];
  float dk[dk_tiles][dk_n_tiles][4];
  fa2::zero_accumulators(dk);
  fa2::zero_accumulators(dv);
  const std::uint32_t a_lane = x4_lane_part<Cfg, true>(0, lane);        // row-major A
  const std::uint32_t b_lane = x4_lane_part<Cfg, false>(0, lane);       // "col" B
  const std::uint32_t t_lane = x4_lane_part<Cfg, true>(0, lane);        // k-major B, .trans
  const std::uint32_t pt_lane = x4_lane_part<PLayout, false>(0, lane);  // P^T, dS^T: .trans
  const std::uint32_t ds_lane = x4_lane_part<PLayout, true>(0, lane);   // dS as A of dQ

  ResidentKeys<Cfg> resident_keys;  // loaded once K's tile is in (the first block)
  WarpClock<Cfg::tuning.barrier_clock> clocks;
  clocks.start();
  for (int q_block = work.first_q_block; q_block < work.q_blocks; ++q_block) {
    const int stage = (q_block - work.first_q_block) % Cfg::stages;
    float next_stat;  // this block's tiles are in; P and dS are free
    if constexpr (Cfg::tuning.barrier_clock) {
      wait_async_copies<0>();
      clocks.lap(q_block == work.first_q_block ? &WarpClocks::prologue : &WarpClocks::copy_wait);
      __syncthreads();
      clocks.lap(&WarpClocks::top_wait);
      next_stat = stream.issue_next(q_block, stage);
    } else {
      next_stat = stream.begin(q_block, stage);
    }

    const int q0 = q_block * Cfg::br;
    const std::uint32_t q_tile = stream.q_tile(stage);
    const std::uint32_t do_tile = stream.do_tile(stage);
    const float* lse_log2 = stats + stage * 2 * Cfg::br;
    const float* d_block = lse_log2 + Cfg::br;

    {
      // P = 2^(S * scale_log2 - LSE_log2), masked where a key of this warp
      // can be past kv_len or right of a row's diagonal, or a row past q_len.
      float s[Cfg::STiling::m_tiles][Cfg::STiling::n_tiles][4];
      if constexpr (Cfg::tuning.resident_k) {
        if (q_block == work.first_q_block) resident_keys.load(k_tile, b_lane, s_key0);
        rows_times_keys_from<T, Cfg>(s, q_tile, a_lane, s_row0,
                                     [&](int step, int pair, std::uint32_t(&b)[4]) {
#pragma unroll
                                       for (int e = 0; e < 4; ++e) {
                                         b[e] = resident_keys.b[step][pair][e];
                                       }
                                     });
      } else {
        rows_times_keys<T, Cfg>(s, q_tile, a_lane, s_row0, k_tile, b_lane, s_key0);
      }
      float dp[Cfg::STiling::m_tiles][Cfg::STiling::n_tiles][4];
      if constexpr (Cfg::tuning.dp_first) {
        rows_times_keys<T, Cfg>(dp, do_tile, a_lane, s_row0, v_tile, b_lane, s_key0);
      }
      const int first_key = c0 + s_key0;
      const bool masked = q0 + s_row0 + Cfg::STiling::rows > q_len ||
                          first_key + Cfg::STiling::cols > kv_len ||
                          (causal && first_key + Cfg::STiling::cols - 1 > q0 + s_row0 + shift);
#pragma unroll
      for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
        // The copies of BwdTuning::async_stats leave the LSE unscaled.
        constexpr float lse_scale = Cfg::tuning.async_stats ? log2_e : 1.f;
        const float row_lse[2] = {lse_log2[s_row0 + 16 * mt + group] * lse_scale,
                                  lse_log2[s_row0 + 16 * mt + group + 8] * lse_scale};
#pragma unroll
        for (int nt = 0; nt < Cfg::STiling::n_tiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s[mt][nt][e] = exp2_approx(fmaf(s[mt][nt][e], scale_log2, -row_lse[e / 2]));
            if constexpr (Cfg::tuning.mask_per_entry) {
              if (masked) {
                mask_entry(s[mt][nt][e], first_key + 8 * nt + 2 * quad + (e % 2),
                           q0 + s_row0 + 16 * mt + group + 8 * (e / 2), q_len, kv_len, causal,
                           shift);
              }
            }
          }
        }
      }
      // One branch around the whole mask, as fa2_backward_main's (a branch
      // per entry is issued predicated off in every unmasked block).
      // BwdTuning::row_limit_mask: one key limit a row, one compare an entry.
      if (!Cfg::tuning.mask_per_entry && masked) {
        if constexpr (Cfg::tuning.row_limit_mask) {
#pragma unroll
          for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
              const int row = q0 + s_row0 + 16 * mt + group + 8 * half;
              const int keys_left =
                  key_limit(row, q_len, kv_len, causal, shift) - (first_key + 2 * quad);
#pragma unroll
              for (int nt = 0; nt < Cfg::STiling::n_tiles; ++nt) {
#pragma unroll
                for (int column = 0; column < 2; ++column) {
                  if (8 * nt + column >= keys_left) s[mt][nt][2 * half + column] = 0.f;
                }
              }
            }
          }
        } else {
#pragma unroll
          for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
#pragma unroll
            for (int nt = 0; nt < Cfg::STiling::n_tiles; ++nt) {
#pragma unroll
              for (int e = 0; e < 4; ++e) {
                mask_entry(s[mt][nt][e], first_key + 8 * nt + 2 * quad + (e % 2),
                           q0 + s_row0 + 16 * mt + group + 8 * (e / 2), q_len, kv_len, causal,
                           shift);
              }
            }
          }
        }
      }
      store_accumulators<T, PLayout>(p_tile, s, s_row0, s_key0);

      // dS = P * (dP - D), dP = dO V^T.
      if constexpr (!Cfg::tuning.dp_first) {
        rows_times_keys<T, Cfg>(dp, do_tile, a_lane, s_row0, v_tile, b_lane, s_key0);
      }
#pragma unroll
      for (int mt = 0; mt < Cfg::STiling::m_tiles; ++mt) {
        const float row_d[2] = {d_block[s_row0 + 16 * mt + group],
                                d_block[s_row0 + 16 * mt + group + 8]};
#pragma unroll
        for (int nt = 0; nt < Cfg::STiling::n_tiles; ++nt) {
#pragma unroll
          for (int e = 0; e < 4; ++e) dp[mt][nt][e] = s[mt][nt][e] * (dp[mt][nt][e] - row_d[e / 2]);
        }
      }
      store_accumulators<T, PLayout>(ds_tile, dp, s_row0, s_key0);
    }
    clocks.lap(&WarpClocks::scores);
    __syncthreads();  // every warp's P and dS
    clocks.lap(&WarpClocks::ds_wait);

    // dV += P^T dO, dK += dS^T Q over the block's query rows; dQ between
    // them where the tuning asks (BwdTuning::dq_before_dk). With split_kv a
    // warp has one product, dV or (dk_warp) dK, accumulated into dv; without
    // it dk_warp is false, so warp_product is dV.
    const auto accumulate = [&](auto& acc, std::uint32_t x_tile, std::uint32_t y_tile) {
      transposed_times<T, Cfg, PLayout, Cfg, Cfg::KvTiling::m_tiles, Cfg::KvTiling::n_tiles,
                       Cfg::r_steps>(acc, x_tile, pt_lane, kv_key0, y_tile, t_lane, kv_dim0);
    };
    const auto warp_product = [&] {
      accumulate(dv, dk_warp ? ds_tile : p_tile, dk_warp ? q_tile : do_tile);
    };
    if constexpr (!(Cfg::tuning.split_kv && Cfg::tuning.dq_before_dk)) {
      warp_product();
      clocks.lap(&WarpClocks::dv);
    }
    if constexpr (!Cfg::tuning.split_kv && !Cfg::tuning.dq_before_dk) {
      accumulate(dk, ds_tile, q_tile);
      clocks.lap(&WarpClocks::dk);
    }

    // dQ += dS K for this warp's rows and columns (BwdTuning::dq_on_dv_warps:
    // the dV half's only).
    if (!Cfg::tuning.dq_on_dv_warps || !dk_warp) {
      float dq[Cfg::QTiling::m_tiles][Cfg::QTiling::n_tiles][4];
      fa2::zero_accumulators(dq);
#pragma unroll
      for (int step = 0; step < Cfg::c_steps; ++step) {
        std::uint32_t a[Cfg::QTiling::m_tiles][4];
#pragma unroll
        for (int mt = 0; mt < Cfg::QTiling::m_tiles; ++mt) {
          ldmatrix_x4(a[mt], x4_address<PLayout>(ds_tile, ds_lane, q_row0 + 16 * mt, step));
        }
#pragma unroll
        for (int pair = 0; pair < Cfg::QTiling::n_tiles / 2; ++pair) {
          std::uint32_t b[4];
          ldmatrix_x4_trans(b, x4_address<Cfg>(k_tile, t_lane, 16 * step, q_dim0 / 16 + pair));
#pragma unroll
          for (int mt = 0; mt < Cfg::QTiling::m_tiles; ++mt) {
            mma_16x8x16<T>(dq[mt][2 * pair], a[mt], b[0], b[1]);
            mma_16x8x16<T>(dq[mt][2 * pair + 1], a[mt], b[2], b[3]);
          }
        }
      }
      clocks.lap(&WarpClocks::dq_mma);
      if (fragment_dq_layout(Cfg::tuning.fragment_dq) && q0 + Cfg::br <= q_len) {
        float* block = dq_head + static_cast<std::int64_t>(q0) * Cfg::head_dim;
#pragma unroll
        for (int mt = 0; mt < Cfg::QTiling::m_tiles; ++mt) {
#pragma unroll
          for (int nt = 0; nt < Cfg::QTiling::n_tiles; ++nt) {
            add_four(block + fragment_dq_offset<Cfg>({q_warp, lane, mt, nt}), dq[mt][nt]);
          }
        }
      } else {
#pragma unroll
        for (int mt = 0; mt < Cfg::QTiling::m_tiles; ++mt) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int row = q0 + q_row0 + 16 * mt + group + 8 * h;
            if (row >= q_len) continue;
            float* out =
                dq_head + static_cast<std::int64_t>(row) * Cfg::head_dim + q_dim0 + 2 * quad;
#pragma unroll
            for (int nt = 0; nt < Cfg::QTiling::n_tiles; ++nt) {
              add_pair<Cfg::tuning.vector_atomics>(out + 8 * nt, dq[mt][nt][2 * h],
                                                   dq[mt][nt][2 * h + 1]);
            }
          }
        }
      }
      clocks.lap(&WarpClocks::dq_atomics);
    }
    if constexpr (Cfg::tuning.split_kv && Cfg::tuning.dq_before_dk) {
      warp_product();
    } else if constexpr (Cfg::tuning.dq_before_dk) {
      accumulate(dk, ds_tile, q_tile);
    }

    stream.finish(q_block, stage, next_stat);
    clocks.lap(&WarpClocks::dk);
    ++clocks.sums.blocks;
  }
  clocks.write(warp, Cfg::warps);

  if constexpr (Cfg::tuning.split_kv) {
    store_block_rows<T, Cfg>((dk_warp ? d_k : d_v) + work.kv_offset, dv, c0 + kv_key0, kv_dim0,
                             kv_len, dk_warp ? scale : 1.f);
  } else {
    store_block_rows<T, Cfg>(d_k + work.kv_offset, dk, c0 + kv_key0, kv_dim0, kv_len, scale);
    store_block_rows<T, Cfg>(d_v + work.kv_offset, dv, c0 + kv_key0, kv_dim0, kv_len, 1.f);
  }
}

template <typename T, typename Cfg>
cudaError_t launch_fa2_backward_2d_config(const AttentionShape& shape, const BackwardBuffers& io,
                                          const LaunchContext& context) {
  if (shape.key_heads() != shape.heads) return cudaErrorInvalidValue;
  // The fragments' convert reads a row-major accumulator where the config
  // or the architecture keeps one.
  return launch_fa2_backward_with<T, Cfg>(
      fa2_backward_main_2d<T, Cfg>, fa2_backward_convert_dq_fragments<T, Cfg>, shape, io, context);
}

}  // namespace cfr::kernels::fa2_bwd
