// fa2_bwd's launcher: the three launches of kernels/fa2_backward.cuh with
// the config the catalog gives the current device (fa2_backward_configs),
// fp16 and bf16; fa2_backward_for_arch.hpp lets a test run another
// architecture's config.

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_backward.cuh"
#include "kernels/fa2_backward_for_arch.hpp"
#include "kernels/kernel_dispatch.cuh"

namespace cfr::kernels {
namespace {

// The variant tool's fastest knobs for the catalog's tiles, measured on the
// H200 (docs/perf-notes.md, "fa2_bwd's knobs measured"): vector dQ atomics
// (sm_90's red.global.add.v2.f32; other architectures add the pair singly)
// at both head dims, 17 % less time at d 64; at d 128 also the split
// accumulation and the k16 steps unrolled by 2, 19 % less.
constexpr fa2_bwd::BwdTuning tuning_for(int head_dim) {
  return {.vector_atomics = true,
          .split_accumulate = head_dim == 128,
          .d_step_unroll = head_dim == 128 ? 2 : 0};
}

template <int head_dim, KernelConfig config>
using BwdConfigOf = fa2_bwd::BwdConfig<head_dim, config.tile.br, config.tile.bc, config.warps,
                                       config.ctas_per_sm, tuning_for(head_dim)>;

cudaError_t launch_fa2_backward(const AttentionShape& shape, const BackwardBuffers& io,
                                const LaunchContext& context) {
  return launch_fa2_backward_for_arch(current_device().cc, shape, io, context);
}

}  // namespace

cudaError_t launch_fa2_backward_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                         const BackwardBuffers& io, const LaunchContext& context) {
  if (!backward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa2_backward_kernel>(shape, [&]<typename T, int head_dim>() {
    return with_config_for<fa2_backward_kernel, head_dim>(cc, [&]<KernelConfig config>() {
      return fa2_bwd::launch_fa2_backward_config<T, BwdConfigOf<head_dim, config>>(shape, io,
                                                                                   context);
    });
  });
}

const BackwardKernel fa2_bwd_launcher{fa2_bwd::workspace_bytes, launch_fa2_backward};

}  // namespace cfr::kernels
