// fa2_bwd's launcher: the three launches of kernels/fa2_backward.cuh with
// the config the catalog gives the current device (fa2_backward_configs),
// fp16 and bf16; fa2_backward_for_arch.hpp lets a test run another
// architecture's config.

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_backward.cuh"
#include "kernels/fa2_backward_for_arch.hpp"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::kernels {
namespace {

template <int head_dim, KernelConfig config>
using BwdConfigOf =
    fa2_bwd::BwdConfig<head_dim, config.tile.br, config.tile.bc, config.warps, config.ctas_per_sm>;

std::int64_t query_rows(const AttentionShape& shape) {
  return static_cast<std::int64_t>(heads_total(shape)) * shape.seq_len;
}

// D, then the fp32 dQ accumulator: the pre-pass writes both before the main
// launch reads them, so nothing needs to be zero beforehand.
std::size_t fa2_backward_workspace_bytes(const AttentionShape& shape) {
  if (!has_positive_dimensions(shape)) return 0;
  const std::int64_t rows = query_rows(shape);
  return fa2_bwd::dq_accum_offset(rows) +
         static_cast<std::size_t>(rows) * static_cast<std::size_t>(shape.head_dim) * sizeof(float);
}

template <typename T, typename Cfg>
cudaError_t launch_config(const AttentionShape& shape, const BackwardBuffers& io,
                          const LaunchContext& context) {
  if (context.workspace == nullptr ||
      context.workspace_bytes < fa2_backward_workspace_bytes(shape)) {
    return cudaErrorInvalidValue;
  }
  const std::int64_t rows = query_rows(shape);
  auto* d_rows = static_cast<float*>(context.workspace);
  auto* dq_accum = reinterpret_cast<float*>(static_cast<unsigned char*>(context.workspace) +
                                            fa2_bwd::dq_accum_offset(rows));
  const auto* d_o = static_cast<const T*>(io.d_o);
  const TileShape tile{Cfg::br, Cfg::bc};
  const int n = shape.seq_len;

  CFR_CUDA_CHECK_NOEXCEPT(launch_tiled(fa2_bwd::fa2_backward_prepass<T, Cfg>, Cfg::prepass_order,
                                       shape, tile, Cfg::threads, 0, context.stream,
                                       static_cast<const T*>(io.o), d_o, d_rows, dq_accum, n));
  CFR_CUDA_CHECK_NOEXCEPT(
      launch_tiled(fa2_bwd::fa2_backward_main<T, Cfg>, Cfg::main_order, shape, tile, Cfg::threads,
                   Cfg::smem_bytes, context.stream, static_cast<const T*>(io.q),
                   static_cast<const T*>(io.k), static_cast<const T*>(io.v), d_o, io.lse, d_rows,
                   dq_accum, static_cast<T*>(io.d_k), static_cast<T*>(io.d_v), n, shape.keys(),
                   shape.causal, softmax_scale_of(shape), softmax_scale_log2_of(shape)));
  return launch_tiled(fa2_bwd::fa2_backward_convert_dq<T, Cfg>, Cfg::convert_order, shape, tile,
                      Cfg::threads, 0, context.stream, dq_accum, static_cast<T*>(io.d_q), n,
                      softmax_scale_of(shape));
}

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
      return launch_config<T, BwdConfigOf<head_dim, config>>(shape, io, context);
    });
  });
}

const BackwardKernel fa2_bwd_launcher{fa2_backward_workspace_bytes, launch_fa2_backward};

}  // namespace cfr::kernels
