#pragma once

// The description of every attention kernel built into the tool
// (kernel_description.hpp says what each field means; docs/kernels.md how to
// add a kernel). The CUDA launchers instantiate their templates from these
// constants, and the traffic models, the report and `audit` read the same
// values, so a tile size lives in one place.

#include <array>
#include <string_view>

#include "roofline/model/fa3_rows.hpp"
#include "roofline/model/kernel_description.hpp"

namespace cfr {

// S and P in HBM: cuBLAS picks its own tiles and launch order, so none are
// listed. The softmax pass needs nothing newer than Volta.
inline constexpr std::array<int, 3> naive_head_dims{32, 64, 128};
inline constexpr KernelDescription naive_kernel{
    .name = "naive",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .head_dims = naive_head_dims,
    .min_compute_capability = {7, 0},
    .arithmetic = ArithmeticPath::library_gemm,
    .instruction = Instruction::library_gemm,
    .traffic = TrafficModelKind::materialized,
    .summary = "S = QK^T and O = PV through cuBLAS, softmax kernel; S and P in HBM",
};

// The seed's tiles. Its fp32 shared-memory tiles (Q, K, V and P) take about
// 70 KB at 64x64, d = 64, and 55 KB at 32x32, d = 128: above the 48 KB
// default, so the launcher opts in to more (every sm_75+ part allows 64 KB or
// more per block); a 64x64 tile at d = 128 would need about 140 KB. 4 x Br
// threads (kernels/simt_tiles.cuh's layout): 8 warps at Br = 64, 4 at 32. At
// least 2 CTAs per SM: for 256 threads that caps registers at 128, which the
// tiles fit without spilling, and shared memory allows 2 anyway. Nothing in
// its code needs a GPU newer than Volta.
inline constexpr std::array<int, 3> fa1_scalar_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 2> fa1_scalar_configs{{
    {.max_head_dim = 64, .config = {.tile = {64, 64}, .warps = 8, .stages = 1, .ctas_per_sm = 2}},
    {.max_head_dim = 128, .config = {.tile = {32, 32}, .warps = 4, .stages = 1, .ctas_per_sm = 2}},
}};
inline constexpr std::array<GridLaunch, 1> fa1_scalar_launches{{
    {"forward", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
inline constexpr KernelDescription fa1_scalar_kernel{
    .name = "fa1_scalar",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .head_dims = fa1_scalar_head_dims,
    .min_compute_capability = {7, 0},
    .configs = fa1_scalar_configs,
    .launches = fa1_scalar_launches,
    .arithmetic = ArithmeticPath::fp32_simt,
    .instruction = Instruction::ffma,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA1 structure, one CTA per Q block over all K/V blocks, fp32 SIMT",
};

// One warp per 16 query rows. cp.async double-buffers K and V (2 stages) and
// bf16 WMMA needs sm_80. Resident CTAs are declared to ptxas through
// __launch_bounds__, chosen so that nothing spills on sm_80, sm_86 or
// sm_90(a): d = 32: 4 (5 spilled on sm_90); d = 64: 3 (4 spilled for fp16,
// and with no value ptxas gave fp16 only 96 registers on sm_80/86 and
// spilled); d = 128: 4, what shared memory allows.
inline constexpr std::array<int, 3> fa1_wmma_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 3> fa1_wmma_configs{{
    {.max_head_dim = 32, .config = {.tile = {64, 32}, .warps = 4, .stages = 2, .ctas_per_sm = 4}},
    {.max_head_dim = 64, .config = {.tile = {64, 32}, .warps = 4, .stages = 2, .ctas_per_sm = 3}},
    {.max_head_dim = 128, .config = {.tile = {32, 32}, .warps = 2, .stages = 2, .ctas_per_sm = 4}},
}};
inline constexpr std::array<GridLaunch, 1> fa1_wmma_launches{{
    {"forward", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
inline constexpr KernelDescription fa1_wmma_kernel{
    .name = "fa1_wmma",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa1_wmma_head_dims,
    .min_compute_capability = {8, 0},
    .configs = fa1_wmma_configs,
    .launches = fa1_wmma_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::wmma,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA1 structure on tensor cores, WMMA m16n16k16, fp32 accumulate",
};

// FlashAttention-2 structure on mma.sync m16n8k16 (kernels/fa2_mma.cu): S,
// the online softmax and P in registers, each warp owning 32 query rows (two
// 16-row MMA tiles) for the whole pass. Tiles chosen by timing variants on the
// H200 (docs/perf-notes.md, results/h200/fa2-dev/): 4 warps and 2 CTAs per SM
// for d <= 64; Br = 256 over 8 warps, 1 CTA per SM, for d = 128 (the same
// per-warp work with half the cp.async traffic per query row, 2-5 % faster
// than 128 x 64). Heads run fastest in the grid and Q blocks heaviest first
// across it: with Q blocks fastest, "heaviest first" held within each head
// only, the last wave held whole heads' worth of long blocks, and causal took
// 0.80 of non-causal's time at N = 8192 where the work is 0.5 (a list-
// scheduling model, tests/gpu/wave_schedule.py, predicted both; the H200
// measured 0.80 and 0.51, docs/perf-notes.md v5). The price: CTAs resident
// together read every head's K/V, so large H x N reads more DRAM (the
// L2-aware model has the order; results/h200/fa2-dev/round5-order/).
// sm_86 and sm_89 give a block at most 99 KB of shared memory (CUDA C++
// Programming Guide, "Compute Capabilities", shared memory per block): the d =
// 128 tile's 128 KB does not fit there, so they run Br = 128 over 4 warps
// (Q 32 KB and two 64-key K/V stages, 96 KB); sm_80 (163 KB) and sm_90 (227
// KB) keep 256 rows. The GPU tests run the smaller tile on the H200 too
// (kernels/fa2_mma_for_arch.hpp).
inline constexpr std::array<int, 3> fa2_mma_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 5> fa2_mma_configs{{
    {.max_head_dim = 32, .config = {.tile = {128, 128}, .warps = 4, .stages = 2, .ctas_per_sm = 2}},
    {.max_head_dim = 64, .config = {.tile = {128, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 2}},
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config = {.tile = {256, 64}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128,
     .min_cc = {8, 6},
     .config = {.tile = {128, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128, .config = {.tile = {256, 64}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
}};
inline constexpr std::array<GridLaunch, 1> fa2_mma_launches{{
    {"forward",
     {GridAxis::heads, GridAxis::batch, GridAxis::q_blocks},
     CausalBlockOrder::heaviest_first},
}};
// fa2_mma takes K/V of any length and fewer K/V heads (each query head reads
// its group's K/V), not a paged cache.
inline constexpr KernelDescription fa2_mma_kernel{
    .name = "fa2_mma",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa2_mma_head_dims,
    .min_compute_capability = {8, 0},
    .configs = fa2_mma_configs,
    .launches = fa2_mma_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::mma_sync,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA2 structure: mma.sync m16n8k16, S and P in registers, cp.async K/V pipeline",
    .shapes = {.kv_len = true, .kv_heads = true},
};

// Split-KV decoding (kernels/fa2_decode.cuh, flash-decoding): the query
// heads of a K/V head's group and their tokens share one m16n8k16 tile of
// 16 rows (64 when they are more than 16), so K/V is read once per group;
// the keys are split across CTAs (kv_splits.hpp) and the last split of a
// group combines them. Four warps split each tile's keys; a 16-row tile
// streams 64 keys at d = 128 and 128 at d = 64, 3 stages, 2 CTAs per SM
// (102 and 100 KB of shared memory): the variants timed on the H200 in
// results/h200/decode-dev/ (docs/perf-notes.md). Grid: row blocks x splits
// on blockIdx.x, K/V heads on y, batch on z.
// sm_86 and sm_89 (99 KB a block) take 2 stages: 68 KB at d = 128.
inline constexpr std::array<int, 2> fa2_decode_head_dims{64, 128};
inline constexpr std::array<ConfigRule, 6> fa2_decode_v1_configs{{
    {.max_head_dim = 64,
     .min_cc = {9, 0},
     .config = {.tile = {16, 128}, .warps = 4, .stages = 3, .ctas_per_sm = 2}},
    {.max_head_dim = 64,
     .min_cc = {8, 6},
     .config = {.tile = {16, 128}, .warps = 4, .stages = 2, .ctas_per_sm = 2}},
    {.max_head_dim = 64, .config = {.tile = {16, 128}, .warps = 4, .stages = 3, .ctas_per_sm = 2}},
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config = {.tile = {16, 64}, .warps = 4, .stages = 3, .ctas_per_sm = 2}},
    {.max_head_dim = 128,
     .min_cc = {8, 6},
     .config = {.tile = {16, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 2}},
    {.max_head_dim = 128, .config = {.tile = {16, 64}, .warps = 4, .stages = 3, .ctas_per_sm = 2}},
}};
// Revision 2: at d = 128 on sm_90 a paged cache's split copies its page
// indices (up to 2048, 8 KB) into shared memory and addresses rows by 32-bit
// numbers, and kv_splits.hpp gives it the contiguous cache's splits where
// they fit (docs/perf-notes.md, round 14: 16-token pages 3-5 % faster at the
// same splits on an H100, within 0.9-3.3 % of the contiguous cache at its plan).
inline constexpr std::array<ConfigRule, 6> fa2_decode_configs{{
    fa2_decode_v1_configs[0],
    fa2_decode_v1_configs[1],
    fa2_decode_v1_configs[2],
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config =
         {.tile = {16, 64}, .warps = 4, .stages = 3, .ctas_per_sm = 2, .page_table_entries = 2048}},
    fa2_decode_v1_configs[4],
    fa2_decode_v1_configs[5],
}};
inline constexpr std::array<GridLaunch, 1> fa2_decode_launches{{
    {"forward", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
// More than 16 group rows (16 query tokens of a 4-head group): 64-row CTAs
// over 64-key tiles, each warp 16 rows (round 7: 342 us against 434 for 32
// rows at B 8, Nk 32768, d 128).
constexpr TileShape fa2_decode_tile(const AttentionProblem& problem, TileShape config_tile,
                                    int /*sm_count*/ = 0) {
  return problem.group() * problem.seq_len > 16 ? TileShape{64, 64} : config_tile;
}
inline constexpr KernelDescription fa2_decode_v1_kernel{
    .name = "fa2_decode",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa2_decode_head_dims,
    .min_compute_capability = {8, 0},
    .configs = fa2_decode_v1_configs,
    .launches = fa2_decode_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::mma_sync,
    .traffic = TrafficModelKind::split_kv,
    .summary =
        "split-KV decoding: a K/V head's query heads share an mma.sync tile, splits combined",
    .shapes = {.kv_len = true, .kv_heads = true, .paged = true, .max_q_len = 16},
    .problem_tile = fa2_decode_tile,
    .revision = 1,
};

inline constexpr std::array<const KernelDescription*, 1> fa2_decode_earlier{&fa2_decode_v1_kernel};
inline constexpr KernelDescription fa2_decode_kernel = [] {
  KernelDescription kernel = fa2_decode_v1_kernel;
  kernel.configs = fa2_decode_configs;
  kernel.revision = 2;
  kernel.earlier_revisions = fa2_decode_earlier;
  return kernel;
}();

// FlashAttention-3's forward structure on sm_90a (kernels/fa3_wgmma.cuh):
// one producer warpgroup issuing TMA copies of Q and of K/V tiles into a ring
// of mbarrier-guarded slots, two consumer warpgroups of 64 query rows each
// (three at d 64 where revision 8's rule takes 192 rows, below) running
// wgmma m64nBck16 for S = Q K^T (Q, K from shared memory) and m64n{d}k16 for
// O += P V (P from registers); setmaxnreg moves registers from the producer
// (24) to the consumers (240; 32 and 160 with three). Br = 128 = 2 x wgmma's
// M; Bc = 128 causal (fa3_wgmma_tile below: 192 and 176 without a mask where
// they pad little): S takes Bc / 2
// fp32 registers a consumer thread and O d / 2, 88 + 64 at d = 128 with P's 44
// inside 240; two stages of K and V are 64 KB (96 at Bc 192) at d = 64 and
// 128 KB (176 at Bc 176) at d = 128, with Q 16 or 32 KB (sm_90: 227 KB a block).
// One CTA per SM: the register split is one CTA's 64K registers. Persistent:
// one CTA per SM takes (head, Q block) tiles in this launch order from a
// counter (so the order is the one tiles run in, as for a launched grid):
// heads side by side, in groups of K/V heads whose K/V fit a quarter of the
// L2 (HeadGroups::fit_l2), one group after another, each group's Q blocks
// heaviest first when causal. Heads side by side balance a causal run of few
// waves (every head's heaviest tile starts first); the groups keep the K/V
// the running CTAs stream inside the L2. wgmma needs sm_90a code, so it is
// built only for gpu_archs ending in 'a'.
inline constexpr std::array<int, 2> fa3_wgmma_head_dims{64, 128};
inline constexpr std::array<ConfigRule, 1> fa3_wgmma_configs{{
    {.max_head_dim = 128,
     .config = {.tile = {128, 128}, .warps = 12, .stages = 2, .ctas_per_sm = 1}},
}};
inline constexpr std::array<GridLaunch, 1> fa3_wgmma_launches{{
    {"forward",
     {GridAxis::heads, GridAxis::batch, GridAxis::q_blocks},
     CausalBlockOrder::heaviest_first,
     HeadGroups::fit_l2},
}};
// Revision 4 (commit 14062b1 up to ce3890b): Q blocks fastest, each head
// heaviest first, one head after another. It left the last heads' heaviest
// tiles for the end of a causal run of few waves (1.5x v3's time at causal
// N 4K, docs/perf-notes.md). The H200's reports of its time (the CI baseline,
// results/h200/fa3/, profile/fa3-n16k.json) hold its rows.
inline constexpr std::array<GridLaunch, 1> fa3_wgmma_v4_launches{{
    {"forward",
     {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch},
     CausalBlockOrder::heaviest_first},
}};
// Any K/V length and fewer K/V heads: each query head's CTAs copy its K/V
// head's tiles (tensor maps over [batch x K/V heads, keys, d]).
inline constexpr KernelDescription fa3_wgmma_v4_kernel{
    .name = "fa3_wgmma",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa3_wgmma_head_dims,
    .min_compute_capability = {9, 0},
    .configs = fa3_wgmma_configs,
    .launches = fa3_wgmma_v4_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::wgmma,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA3 structure: TMA K/V ring, producer + 2 consumer warpgroups, wgmma m64n128k16",
    .shapes = {.kv_len = true, .kv_heads = true},
    .revision = 4,
};
// Revision 5 (ce3890b up to d23b0d5): the heads side by side in groups,
// above, every K/V block 128 keys.
inline constexpr KernelDescription fa3_wgmma_v5_kernel = [] {
  KernelDescription kernel = fa3_wgmma_v4_kernel;
  kernel.launches = fa3_wgmma_launches;
  kernel.revision = 5;
  return kernel;
}();
// Revision 6 (c109ef9 up to 8cc0437): without a mask, K/V blocks of more
// keys, so that a block's fixed costs (the O rescale, the barrier turns, the
// row statistics) are spread over more of its matmuls: FlashAttention-3's 176
// at d 128 and 192 at d 64 (its hopper/tile_size.h), as many as S's
// registers allow (88 and 96 a consumer thread). A causal block stays at 128:
// the diagonal's masked share grows with Bc.
constexpr int fa3_wgmma_full_mask_bc(std::int64_t head_dim) {
  return head_dim <= 64 ? 192 : 176;
}
constexpr TileShape fa3_wgmma_v6_tile(const AttentionProblem& problem, TileShape config_tile,
                                      int /*sm_count*/ = 0) {
  return problem.causal ? config_tile
                        : TileShape{config_tile.br, fa3_wgmma_full_mask_bc(problem.head_dim)};
}
inline constexpr KernelDescription fa3_wgmma_v6_kernel = [] {
  KernelDescription kernel = fa3_wgmma_v5_kernel;
  kernel.problem_tile = fa3_wgmma_v6_tile;
  kernel.revision = 6;
  return kernel;
}();
// Revision 7: the longer block only where its last block pads the keys by
// at most 2 % more than 128-key blocks do. It saved 2-3 % of the time at
// N 8K-16K, and cost 0.3-2.8 % where it padded 3 % more (N 2048 and 4096:
// 11 and 22 blocks of 192 hold 2112 and 4224 keys); docs/perf-notes.md, "v7".
constexpr std::int64_t padded_keys(std::int64_t keys, int bc) {
  return (keys + bc - 1) / bc * bc;
}
constexpr TileShape fa3_wgmma_tile(const AttentionProblem& problem, TileShape config_tile,
                                   int /*sm_count*/ = 0) {
  const TileShape longer = fa3_wgmma_v6_tile(problem, config_tile);
  const bool pads_little = 50 * padded_keys(problem.keys(), longer.bc) <=
                           51 * padded_keys(problem.keys(), config_tile.bc);
  return pads_little ? longer : config_tile;
}
inline constexpr KernelDescription fa3_wgmma_v7_kernel = [] {
  KernelDescription kernel = fa3_wgmma_v6_kernel;
  kernel.problem_tile = fa3_wgmma_tile;
  kernel.summary =
      "FA3 structure: TMA K/V ring, producer + 2 consumer warpgroups, wgmma m64n{128,176,192}k16";
  kernel.revision = 7;
  return kernel;
}();
// Revision 8: at d 64, Q blocks of 192 rows (three consumer warpgroups of
// 160 registers, FlashAttention-3's d 64 tile, K/V blocks of 128 keys)
// where the SMs' rounds of tiles let their faster rows pay
// (fa3_wgmma_v8_tile, roofline/model/fa3_rows.hpp).
inline constexpr std::array<const KernelDescription*, 4> fa3_wgmma_earlier{
    &fa3_wgmma_v4_kernel, &fa3_wgmma_v5_kernel, &fa3_wgmma_v6_kernel, &fa3_wgmma_v7_kernel};
inline constexpr KernelDescription fa3_wgmma_kernel = [] {
  KernelDescription kernel = fa3_wgmma_v7_kernel;
  kernel.problem_tile = fa3_wgmma_v8_tile;
  kernel.summary =
      "FA3 structure: TMA K/V ring, producer + 2 or 3 consumer warpgroups, wgmma "
      "m64n{128,176,192}k16";
  kernel.revision = 8;
  kernel.earlier_revisions = fa3_wgmma_earlier;
  return kernel;
}();

// Same thread layout and CTA budget as fa1_scalar in both tiled passes. It
// first computes D = rowsum(dO * O) in a flat pass over the rows, which
// streams O and dO once and has no tile. O and LSE come from fa1_scalar, the
// forward that has every dtype and head dim this kernel has.
inline constexpr std::array<int, 3> fa1_backward_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 2> fa1_backward_configs{{
    {.max_head_dim = 64, .config = {.tile = {64, 64}, .warps = 8, .stages = 1, .ctas_per_sm = 2}},
    {.max_head_dim = 128, .config = {.tile = {32, 32}, .warps = 4, .stages = 1, .ctas_per_sm = 2}},
}};
inline constexpr std::array<GridLaunch, 2> fa1_backward_launches{{
    {"dK dV", {GridAxis::kv_blocks, GridAxis::heads, GridAxis::batch}},
    {"dQ", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
inline constexpr KernelDescription fa1_backward_kernel{
    .name = "fa1_bwd",
    .direction = Direction::backward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .head_dims = fa1_backward_head_dims,
    .min_compute_capability = {7, 0},
    .configs = fa1_backward_configs,
    .launches = fa1_backward_launches,
    .arithmetic = ArithmeticPath::fp32_simt,
    .instruction = Instruction::ffma,
    .traffic = TrafficModelKind::fa1_backward,
    .forward_partner = "fa1_scalar",
    .summary = "FA1 backward: D = rowsum(dO*O), dK/dV per K/V block, dQ per Q block, fp32 SIMT",
};

// FlashAttention-2's backward on mma.sync m16n8k16 (kernels/fa2_backward.cuh):
// a pre-pass per Q block (D = rowsum(dO * O), the fp32 dQ accumulator's rows
// zeroed); one CTA per K/V block of Bc = 16 x warps rows, each warp owning
// 16 keys, streaming the Q blocks of Br rows that see it through a cp.async
// double buffer, dK and dV in fp32 registers, dQ added to the accumulator
// with fp32 atomics; then dQ converted to the output dtype. O and LSE come
// from fa2_mma. Shared memory: K and V (Bc rows), two stages of Q and dO (Br
// rows), dS^T (Bc x Br) and the stages' LSE and D: 81 KB at d = 64 and
// 145 KB at d = 128 with Br 64, Bc 128, which sm_80 (163 KB) and sm_90
// (227 KB) give a block; sm_86 and sm_89 (99 KB) run Br 32 over Bc 64 at
// d = 128 (69 KB). One CTA per SM: dK and dV take d fp32 registers per lane
// (128 at d = 128) next to S^T and dP^T (Br / 2 each), which 2 CTAs' 128
// registers cannot hold. Without a mask K/V blocks run fastest in the grid,
// so the CTAs resident together stream one head's Q and dO. Causal, block 0
// streams the most Q blocks, and from revision 2 the grid walks heads
// fastest in groups of the fewest K/V heads whose CTAs fill the resident
// slots (causal_grid, HeadGroups::fill_slots; batch and heads as one head
// index: blockIdx.x the head within its group, .y the K/V block, .z the
// group), every head of a group at block 0 first. With blocks fastest the
// last heads' heaviest CTAs started after the first heads' light ones and
// ran alone at the end: at N 4096, 256 CTAs on 132 SMs, a list schedule of
// the CTAs' Q-block steps takes 1.59 times their mean share an SM, heads
// fastest 1.00, and the measured causal / full time of every backward
// there, ours and flash's, was 0.78-0.80 where the work is 0.52. A group
// rather than every head: where a head's CTAs alone fill the GPU (132 SMs
// from N 16,897: 133 blocks) the groups are single heads, blocks fastest as before, and
// the heads streamed side by side stay as few as the balance needs. GQA: the main
// launch's heads are the K/V heads (B x Hkv), each CTA streaming the Q
// blocks of its group's query heads, so dK and dV sum over the group in its
// registers; as many keys as queries only.
inline constexpr std::array<int, 3> fa2_backward_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 4> fa2_backward_configs{{
    {.max_head_dim = 64, .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128,
     .min_cc = {8, 6},
     .config = {.tile = {32, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128, .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
}};
// Revision 1: the main launch blocks fastest under either mask.
inline constexpr std::array<GridLaunch, 3> fa2_backward_v1_launches{{
    {"D, dQ zero", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
    {"dK dV dQ", {GridAxis::kv_blocks, GridAxis::heads, GridAxis::batch}},
    {"dQ convert", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
inline constexpr std::array<GridLaunch, 3> fa2_backward_launches{{
    fa2_backward_v1_launches[0],
    {.pass = "dK dV dQ",
     .order = {GridAxis::kv_blocks, GridAxis::heads, GridAxis::batch},
     .head_groups = HeadGroups::fill_slots,
     .causal_grid = {GridAxis::heads, GridAxis::kv_blocks, GridAxis::batch}},
    fa2_backward_v1_launches[2],
}};

// The kernel with the launches of revision 1; its description is otherwise
// the current one's (a row that ran it audits with these orders).
constexpr KernelDescription with_v1_backward_launches(KernelDescription kernel) {
  kernel.launches = fa2_backward_v1_launches;
  kernel.revision = 1;
  kernel.earlier_revisions = {};
  return kernel;
}

// `kernel` under another revision number: a revision that changed the code
// but not the launches, tiles or traffic the models read.
constexpr KernelDescription revision_of(KernelDescription kernel, int revision) {
  kernel.revision = revision;
  return kernel;
}

// `kernel` listing `earlier` as its earlier revisions.
constexpr KernelDescription with_earlier_revisions(
    KernelDescription kernel, std::span<const KernelDescription* const> earlier) {
  kernel.earlier_revisions = earlier;
  return kernel;
}
inline constexpr KernelDescription fa2_backward_kernel_base{
    .name = "fa2_bwd",
    .direction = Direction::backward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa2_backward_head_dims,
    .min_compute_capability = {8, 0},
    .configs = fa2_backward_configs,
    .launches = fa2_backward_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::mma_sync,
    .traffic = TrafficModelKind::fa2_backward,
    .forward_partner = "fa2_mma",
    .summary =
        "FA2 backward: mma.sync m16n8k16, dK/dV in registers per K/V block, dQ by fp32 "
        "atomics",
    .shapes = {.kv_heads = true},
    .revision = 2,
};
inline constexpr KernelDescription fa2_backward_v1_kernel =
    with_v1_backward_launches(fa2_backward_kernel_base);
inline constexpr std::array<const KernelDescription*, 1> fa2_backward_earlier{
    &fa2_backward_v1_kernel};
inline constexpr KernelDescription fa2_backward_kernel =
    with_earlier_revisions(fa2_backward_kernel_base, fa2_backward_earlier);

// fa2_bwd's three launches with FlashAttention-2's own warp tiling in the
// main one (kernels/fa2_backward_2d.cuh): the same pre-pass, convert pass,
// workspace, Q-block stream and dQ atomics, but S and dP [Br, Bc], dK and dV
// [Bc, d] and dQ [Br, d] each tiled 2-D over the warps in blocks two m16
// tiles tall, P and dS through shared memory once. fa2_bwd's warps each own
// 16 keys and all Br query rows, so every warp reads the whole Q and dO tiles
// twice and shared memory is its busiest pipe (docs/perf-notes.md, "What
// limits fa2_bwd"). Counted from the code per warp and Q block: 0.45
// ldmatrix.x4 per mma at d 128 against fa2_bwd's 0.58, and 0.55 against 0.60
// at d 64, plus the P and dS stores. Tiles: the variant tool's 2-D ones
// (tests/gpu/fa2bwd_variants.cu), Br 64 x Bc 128 over 8 warps at both head
// dims (at d 64 Br 128 spilled 72-104 bytes, Br 64 nothing). Shared memory
// (Bwd2dConfig::smem_bytes: K and V, two stages of Q and dO, P and dS, the
// stages' LSE and D): 99,328 B at d 64, which every sm_80+ part grants a
// block (sm_86 and sm_89: 99 KiB, 101,376 B); 164,864 B at d 128, which sm_80
// (163 KiB, 166,912 B) and sm_90 (227 KiB) grant and sm_86 and sm_89 do not:
// they run Br 32 x Bc 64 over 4 warps (74,240 B), fa2_bwd's small tile. One
// CTA per SM (dK and dV in fp32 registers, as fa2_bwd). Square
// self-attention only: its main kernel streams the Q blocks of one query
// head, so GQA's sum of dK and dV over a group is not written.
inline constexpr std::array<int, 2> fa2_backward_2d_head_dims{64, 128};
inline constexpr std::array<ConfigRule, 4> fa2_backward_2d_configs{{
    {.max_head_dim = 64, .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128,
     .min_cc = {8, 6},
     .config = {.tile = {32, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128, .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
}};
inline constexpr KernelDescription fa2_backward_2d_kernel_base{
    .name = "fa2_bwd_2d",
    .direction = Direction::backward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa2_backward_2d_head_dims,
    .min_compute_capability = {8, 0},
    .configs = fa2_backward_2d_configs,
    .launches = fa2_backward_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::mma_sync,
    .traffic = TrafficModelKind::fa2_backward,
    .forward_partner = "fa2_mma",
    .summary =
        "FA2 backward, FlashAttention-2's 2-D warp tiling: P and dS through shared memory, dQ by "
        "fp32 atomics",
    .revision = 2,
};
inline constexpr KernelDescription fa2_backward_2d_v1_kernel =
    with_v1_backward_launches(fa2_backward_2d_kernel_base);
inline constexpr KernelDescription fa2_backward_2d_v2_kernel =
    with_earlier_revisions(fa2_backward_2d_kernel_base, {});
// Revision 3: the same launches, tiles and traffic; dQ = dS K and its
// atomics before dK += dS^T Q, and on sm_90 the dQ accumulator of a whole Q
// block in the order of the warps' MMA fragments, so that one four-wide
// atomic of a warp adds 512 contiguous bytes (FlashAttention-2 keeps its
// accumulator so); the convert pass reads it back in that order.
inline constexpr char fa2_backward_2d_fragment_summary[] =
    "FA2 backward, FlashAttention-2's 2-D warp tiling: P and dS through shared memory, dQ by "
    "fp32 atomics in fragment order";
inline constexpr KernelDescription fa2_backward_2d_v3_kernel = [] {
  KernelDescription kernel = fa2_backward_2d_kernel_base;
  kernel.summary = fa2_backward_2d_fragment_summary;
  kernel.revision = 3;
  return kernel;
}();
// Revision 4: the same launches, tiles and traffic again; on the d 128 tile
// dP's MMAs are issued before P's exponentials, so that the two overlap
// (kernels/fa2_backward.cuh, BwdTuning::dp_first).
inline constexpr KernelDescription fa2_backward_2d_v4_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 4);
// Revision 5: the same launches, tiles and traffic again; on the d 64 tile
// each warp keeps its keys' B fragments of S = Q K^T in registers over the
// Q blocks (BwdTuning::resident_k), so S reads only Q from shared memory.
inline constexpr KernelDescription fa2_backward_2d_v5_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 5);
// Revision 6: the same launches, tiles and traffic again; on the d 64 tile
// half the warps accumulate dV over the whole K/V block and the other half
// dK (BwdTuning::split_kv), each product before the warp's dQ.
inline constexpr KernelDescription fa2_backward_2d_v6_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 6);
// Revision 7: the same launches, tiles and traffic again; on the d 64 tile
// dQ = dS K is computed by the dV half of the warps alone, before their dV,
// while the dK half computes dK (BwdTuning::dq_on_dv_warps).
inline constexpr KernelDescription fa2_backward_2d_v7_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 7);
// Revision 8: the same launches, tiles and traffic again; a warp whose keys
// run past the sequence (the ragged last K/V block's CTA, in every Q block)
// zeroes P's columns past it with one compare a column, where revision 7 ran
// the whole per-entry mask of a diagonal or ragged Q block (ba35a04).
inline constexpr KernelDescription fa2_backward_2d_v8_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 8);
// Revision 9: the same launches, tiles and traffic again; revision 7's code
// but for the mask, which gives each of a thread's rows one key limit (kv_len,
// the diagonal's, none past q_len) and each entry one compare with it
// (98e8dd6).
inline constexpr KernelDescription fa2_backward_2d_v9_kernel =
    revision_of(fa2_backward_2d_v3_kernel, 9);
// Revision 10: the same launches, tiles and traffic again; revision 9's mask
// on the d 64 tile only (BwdTuning::row_limit_mask), revision 7's elsewhere:
// on sm_90a each main kernel's machine code is one of the two revisions'
// (tests/gpu/same_kernel_code.py).
inline constexpr std::array<const KernelDescription*, 9> fa2_backward_2d_earlier{
    &fa2_backward_2d_v1_kernel, &fa2_backward_2d_v2_kernel, &fa2_backward_2d_v3_kernel,
    &fa2_backward_2d_v4_kernel, &fa2_backward_2d_v5_kernel, &fa2_backward_2d_v6_kernel,
    &fa2_backward_2d_v7_kernel, &fa2_backward_2d_v8_kernel, &fa2_backward_2d_v9_kernel};
inline constexpr KernelDescription fa2_backward_2d_kernel = [] {
  KernelDescription kernel =
      with_earlier_revisions(fa2_backward_2d_kernel_base, fa2_backward_2d_earlier);
  kernel.summary = fa2_backward_2d_fragment_summary;
  kernel.revision = 10;
  return kernel;
}();

// FlashAttention-3's backward products on sm_90a's wgmma (kernels/
// fa3_backward.cuh) in fa2_bwd's three launches: the same pre-pass, convert
// pass, workspace and dQ atomics, one CTA per K/V block of Bc = 128 keys
// streaming the Q blocks that see it through a cp.async double buffer. Two
// warpgroups own 64 keys each (wgmma's M): S^T = K Q^T and dP^T = V dO^T
// with both operands from shared memory, dV += P^T dO and dK += dS^T Q with
// P^T and dS^T from registers (an accumulator is the next product's A
// fragment), dS^T through shared memory once for dQ = dS K (both operands
// read through wgmma's transpose bits), added to the fp32 accumulator with
// sm_90's two-wide atomics. Tiles: Br 128 at d 64 and Br 64 at d 128, so
// that dQ splits into 64 x 64 blocks, one a warpgroup (FlashAttention-3's
// backward tiles, hopper/flash_bwd_launch_template.h). Shared memory (K and
// V, two stages of Q and dO, dS^T, the stages' LSE and D): 133,120 B at d 64
// and 148,480 B at d 128; one CTA per SM (dK and dV take d fp32 registers a
// thread beside S^T and dP^T: 255 registers). No warp specialization yet:
// every thread loads, then both warpgroups compute. The forward partner is
// fa3_wgmma (the same sm_90a build). GQA as fa2_bwd: the main launch's heads
// are the K/V heads, each CTA streaming its group's query heads (from the
// last Q block down, the group's heads within each), so dK and dV sum over
// the group in its registers; as many keys as queries only. wgmma needs
// sm_90a code, so it is built only for gpu_archs ending in 'a'.
inline constexpr std::array<int, 2> fa3_backward_head_dims{64, 128};
inline constexpr std::array<ConfigRule, 2> fa3_backward_configs{{
    {.max_head_dim = 64, .config = {.tile = {128, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
    {.max_head_dim = 128, .config = {.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1}},
}};
inline constexpr KernelDescription fa3_backward_kernel_base{
    .name = "fa3_bwd",
    .direction = Direction::backward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .head_dims = fa3_backward_head_dims,
    .min_compute_capability = {9, 0},
    .configs = fa3_backward_configs,
    .launches = fa2_backward_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .instruction = Instruction::wgmma,
    .traffic = TrafficModelKind::fa2_backward,
    .forward_partner = "fa3_wgmma",
    .summary =
        "FA3 backward products on wgmma (S^T, dP^T from shared memory; dV, dK from registers; "
        "dQ = dS K), dQ by fp32 atomics",
    .shapes = {.kv_heads = true},
    .revision = 2,
};
inline constexpr KernelDescription fa3_backward_v1_kernel =
    with_v1_backward_launches(fa3_backward_kernel_base);
inline constexpr std::array<const KernelDescription*, 1> fa3_backward_earlier{
    &fa3_backward_v1_kernel};
inline constexpr KernelDescription fa3_backward_kernel =
    with_earlier_revisions(fa3_backward_kernel_base, fa3_backward_earlier);

inline constexpr std::array<KernelDescription, 10> kernel_catalog{
    naive_kernel,           fa1_scalar_kernel,  fa1_wmma_kernel,     fa2_mma_kernel,
    fa2_decode_kernel,      fa3_wgmma_kernel,   fa1_backward_kernel, fa2_backward_kernel,
    fa2_backward_2d_kernel, fa3_backward_kernel};

// A built-in kernel by name; null when there is none.
constexpr const KernelDescription* find_kernel(std::string_view name) {
  for (const KernelDescription& kernel : kernel_catalog) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

static_assert(!catalog_error(kernel_catalog),
              "roofline/model/kernel_catalog.hpp breaks a catalog rule");

}  // namespace cfr
