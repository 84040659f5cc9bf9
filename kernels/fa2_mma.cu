// fa2_mma's launcher: the kernel (kernels/fa2_mma.cuh) instantiated with each
// config the catalog gives it per head dim (roofline/model/kernel_catalog.hpp),
// fp16 and bf16; a launch runs the config of the current device's compute
// capability (fa2_mma_for_arch.hpp lets a test run another's).

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_mma.cuh"
#include "kernels/fa2_mma_for_arch.hpp"
#include "kernels/kernel_dispatch.cuh"

namespace cfr::kernels {
namespace {

// Exponentials before P V won at d <= 64 and lost at d = 128 on the H200
// (results/h200/fa2-dev/round3 and round4): at d = 128 the fused order frees
// the S registers step by step, where the 255-register budget is tight.
template <int head_dim>
inline constexpr bool exps_before_pv = head_dim <= 64;

template <int head_dim, KernelConfig config>
struct Fa2Traits {
  static constexpr GridLaunch launch = fa2_mma_kernel.launches[0];
  static constexpr int row_tiles = config.tile.br / (16 * config.warps);
  using Cfg = fa2::Fa2Config<head_dim, config.tile.bc, config.warps, row_tiles, config.stages,
                             config.ctas_per_sm, exps_before_pv<head_dim>, launch.order[0],
                             launch.order[1], launch.order[2], launch.causal_order>;
  static_assert(Cfg::br == config.tile.br, "each warp owns whole 16-row MMA tiles");
};

cudaError_t launch_fa2_mma(const AttentionShape& shape, const ForwardBuffers& io,
                           const LaunchContext& context) {
  return launch_fa2_mma_for_arch(current_device().cc, shape, io, context);
}

}  // namespace

cudaError_t launch_fa2_mma_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                    const ForwardBuffers& io, const LaunchContext& context) {
  if (!forward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa2_mma_kernel>(shape, [&]<typename T, int head_dim>() {
    return with_config_for<fa2_mma_kernel, head_dim>(cc, [&]<KernelConfig config>() {
      return fa2::launch_fa2_mma_config<T, typename Fa2Traits<head_dim, config>::Cfg>(
          shape, static_cast<const T*>(io.q), static_cast<const T*>(io.k),
          static_cast<const T*>(io.v), static_cast<T*>(io.o), io.lse, softmax_scale_log2_of(shape),
          context.stream);
    });
  });
}

const ForwardKernel fa2_mma_launcher{no_workspace, launch_fa2_mma};

}  // namespace cfr::kernels
