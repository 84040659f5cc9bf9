// fa3_bwd's launcher: fa2_bwd's three launches with the wgmma main kernel of
// kernels/fa3_backward.cuh, the catalog's tile per head dim (the same on
// every architecture it runs on: sm_90a only, kernels/meson.build), fp16 and
// bf16, square self-attention only.

#include <type_traits>

#include "kernels/attention_launchers.hpp"
#include "kernels/fa3_backward.cuh"
#include "kernels/kernel_dispatch.cuh"

namespace cfr::kernels {
namespace {

template <int head_dim>
using Fa3BwdConfigOf =
    fa3_bwd::BwdWgmmaConfig<head_dim,
                            arch_independent_config<fa3_backward_kernel, head_dim>().tile.br>;

template <int head_dim>
constexpr bool config_matches_catalog() {
  constexpr KernelConfig config = arch_independent_config<fa3_backward_kernel, head_dim>();
  using Cfg = Fa3BwdConfigOf<head_dim>;
  return config.tile.bc == Cfg::bc && config.warps == Cfg::warps && config.stages == Cfg::stages &&
         config.ctas_per_sm == Cfg::min_ctas_per_sm;
}
static_assert(config_matches_catalog<64>() && config_matches_catalog<128>(),
              "the catalog's tiles, warps, stages and CTAs per SM are the kernel's");
// The variant tool's wgmma_d64_br128 and wgmma_d128_br64 (tests/gpu/fa2bwd_variants.cu).
static_assert(std::is_same_v<Fa3BwdConfigOf<64>, fa3_bwd::BwdWgmmaConfig<64, 128>> &&
              std::is_same_v<Fa3BwdConfigOf<128>, fa3_bwd::BwdWgmmaConfig<128, 64>>);

cudaError_t launch_fa3_backward(const AttentionShape& shape, const BackwardBuffers& io,
                                const LaunchContext& context) {
  if (!backward_buffers_usable(io)) return cudaErrorInvalidValue;
  return dispatch_dtype_and_head_dim<fa3_backward_kernel>(shape, [&]<typename T, int head_dim>() {
    return fa3_bwd::launch_fa3_backward_config<T, Fa3BwdConfigOf<head_dim>>(shape, io, context);
  });
}

}  // namespace

const BackwardKernel fa3_bwd_launcher{fa2_bwd::workspace_bytes, launch_fa3_backward};

}  // namespace cfr::kernels
