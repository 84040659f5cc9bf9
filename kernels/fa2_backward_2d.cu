// fa2_bwd_2d's launcher: fa2_bwd's three launches with the 2-D warp-tiled
// main kernel of kernels/fa2_backward_2d.cuh, with the config the catalog
// gives the current device (fa2_backward_2d_configs), fp16 and bf16, square
// self-attention only; fa2_backward_for_arch.hpp lets a test run another
// architecture's config.

#include <type_traits>

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_backward_2d.cuh"
#include "kernels/fa2_backward_for_arch.hpp"
#include "kernels/kernel_dispatch.cuh"

namespace cfr::kernels {
namespace {

// Warps along an output's `rows` so that each warp's block is two m16 tiles
// (32 rows) tall: its A fragments of a k16 step then serve every n8 tile of
// the block, and its B fragments both m16 tiles.
constexpr int warps_along(int rows) {
  return rows / 32;
}

// The variant tool's knobs for these tiles: sm_90's vector dQ atomics (other
// architectures add the pair singly). The k16 steps: fully unrolled on the
// Br 64 tile, which at d = 128 spills 112 bytes so yet ran 1-4 % faster on
// the H200 than unrolled by 2 (no spill) on every timed shape
// (docs/perf-notes.md, "fa2_bwd_2d measured"); unrolled by 2 at d = 128 on
// sm_86's Br 32 tile, which no device of ours has timed (fully unrolled it
// spills 40 bytes, by 2 8 bytes on sm_80).
// From revision 3, dQ and its atomics come before dK, and on sm_90 a whole Q
// block's dQ accumulator is in the warps' fragment order, one four-wide
// atomic a fragment (BwdTuning; docs/perf-notes.md, "fa2_bwd_2d revision
// 3": 0.88-0.92 of revision 2's time without a mask on an H100). From
// revision 4, dP's MMAs before P's exponentials on the d = 128 Br 64 tile
// (perf-notes, "revision 4": 4-5 % faster on an H100, and 80 bytes of
// spill instead of 140); at d = 64 it ran from 2.9 % faster to 1.6 %
// slower, so that tile keeps revision 3's order. From revision 5, the d = 64
// tile keeps S's K fragments in registers (perf-notes, "revision 5": 0.3-2.2 %
// less time than revision 3 on all twelve rows of two timings on an H100;
// 253 registers, no spill, where revision 3 used 241). From revision 6, the
// d = 64 tile has dV on half the warps and dK on the other half, each warp's
// product before its dQ (BwdTuning::split_kv; perf-notes, "revision 6":
// 0.971-0.991 of revision 5's time on all 18 fp16 rows of three timings
// on an H100; 251 registers on sm_90a, 255 on sm_80 and sm_86, no spill).
// At d = 128 split_kv took 0.2-3.5 % more time on 23 of 24 rows, so that tile keeps
// revision 4's. From revision 7, dQ = dS K of the d = 64 tile is computed by the
// dV half of the warps alone, before their dV, while the dK half computes dK
// (BwdTuning::dq_on_dv_warps; perf-notes, "revision 7": 0.953-0.983 of
// revision 6's time on the six fp16 shapes, N 4K-16K and both masks, in each
// of three timings on an H100; 249 registers on sm_80, sm_86 and sm_90a, no
// spill). From revision 10, the d = 64 tile masks with one key limit a row
// (BwdTuning::row_limit_mask; perf-notes, "fa2_bwd_2d revision 9": 0.88-0.91
// of revision 7's time where the last K/V block is ragged, 0.98-1.00 on whole
// blocks); the d = 128 tile keeps revision 7's mask, with which that branch
// took 1.035-1.050 of revision 7's time on whole blocks.
// The d = 64 tile of every architecture (Br 64), which revisions 5-10 tune.
constexpr bool d64_tile(int head_dim, int br) {
  return head_dim == 64 && br == 64;
}
constexpr fa2_bwd::BwdTuning tuning_for(int head_dim, int br) {
  return {.vector_atomics = true,
          .split_accumulate = false,
          .d_step_unroll = head_dim == 128 && br < 64 ? 2 : 0,
          .mask_per_entry = false,
          .dq_before_dk = true,
          .fragment_dq = true,
          .dp_first = head_dim == 128 && br == 64,
          .resident_k = d64_tile(head_dim, br),
          .split_kv = d64_tile(head_dim, br),
          .dq_on_dv_warps = d64_tile(head_dim, br),
          .row_limit_mask = d64_tile(head_dim, br)};
}

// S and dP split along the query rows, dK and dV along the keys, dQ along
// the query rows, each by warps_along.
template <int head_dim, KernelConfig config>
using Bwd2dConfigOf =
    fa2_bwd::Bwd2dConfig<head_dim, config.tile.br, config.tile.bc, config.warps,
                         warps_along(config.tile.br), warps_along(config.tile.bc),
                         warps_along(config.tile.br), tuning_for(head_dim, config.tile.br)>;

template <int head_dim>
using Sm90Config = Bwd2dConfigOf<head_dim, fa2_backward_2d_kernel.config_for(head_dim, {9, 0})>;

// sm_90's configs are two variants of tests/gpu/fa2bwd_variants.cu:
// 2d_d64_dq_on_dv_dq_first and 2d_d128_dp_first.
static_assert(
    std::is_same_v<
        Sm90Config<64>,
        fa2_bwd::Bwd2dConfig<64, 64, 128, 8, 2, 4, 2,
                             fa2_bwd::BwdTuning{true, false, 0, false, true, true, false, false,
                                                false, false, true, true, true, true}>>);
static_assert(
    std::is_same_v<Sm90Config<128>,
                   fa2_bwd::Bwd2dConfig<128, 64, 128, 8, 2, 4, 2,
                                        fa2_bwd::BwdTuning{true, false, 0, false, true, true, false,
                                                           false, false, true}>>);
static_assert(fa2_bwd::dq_fragment_order_round_trips<Sm90Config<64>>());
static_assert(fa2_bwd::dq_fragment_order_round_trips<Sm90Config<128>>());

cudaError_t launch_fa2_backward_2d(const AttentionShape& shape, const BackwardBuffers& io,
                                   const LaunchContext& context) {
  return launch_fa2_backward_2d_for_arch(current_device().cc, shape, io, context);
}

}  // namespace

cudaError_t launch_fa2_backward_2d_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                            const BackwardBuffers& io,
                                            const LaunchContext& context) {
  if (!backward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa2_backward_2d_kernel>(
      shape, [&]<typename T, int head_dim>() {
        return with_config_for<fa2_backward_2d_kernel, head_dim>(cc, [&]<KernelConfig config>() {
          using Cfg = Bwd2dConfigOf<head_dim, config>;
          static_assert(config.stages == Cfg::stages && config.ctas_per_sm == Cfg::min_ctas_per_sm,
                        "the catalog's stages and CTAs per SM are the kernel's");
          return fa2_bwd::launch_fa2_backward_2d_config<T, Cfg>(shape, io, context);
        });
      });
}

const BackwardKernel fa2_bwd_2d_launcher{fa2_bwd::workspace_bytes, launch_fa2_backward_2d};

}  // namespace cfr::kernels
