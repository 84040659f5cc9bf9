// fa2_decode's launcher: the kernel (kernels/fa2_decode.cuh) with the
// catalog's 16-row config per head dim, or 64-row CTAs where a K/V head's
// group rows are more than 16 (fa2_decode_tile), and the splits that
// kv_splits.hpp plans over the device's SMs, as the traffic model does.

#include <cuda_runtime_api.h>

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_decode.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "roofline/model/kv_splits.hpp"

namespace cfr::kernels {
namespace {

template <int head_dim, KernelConfig config>
struct DecodeTraits {
  // 64 rows over 64-key tiles: 2 stages at d = 128 keep 2 CTAs per SM.
  static constexpr int rows64_stages = head_dim >= 128 ? 2 : 3;
  using Rows16 = decode::DecodeConfig<head_dim, config.warps, 1, config.tile.bc, config.stages,
                                      config.ctas_per_sm>;
  using Rows64 =
      decode::DecodeConfig<head_dim, config.warps, 4, 64, rows64_stages, config.ctas_per_sm>;
  // A paged cache's: where the config keeps a split's page indices in shared
  // memory, rows addressed by 32-bit numbers too (the pair round 14 timed).
  static constexpr bool shared_table = config.page_table_entries > 0;
  using Paged16 =
      decode::DecodeConfig<head_dim, config.warps, 1, config.tile.bc, config.stages,
                           config.ctas_per_sm, config.page_table_entries, 1, shared_table>;
  using Paged64 =
      decode::DecodeConfig<head_dim, config.warps, 4, 64, rows64_stages, config.ctas_per_sm,
                           config.page_table_entries, 1, shared_table>;
  static_assert(Rows16::rows == config.tile.br && Rows16::bc == config.tile.bc);
  static_assert(Rows64::rows == 64 && Rows64::bc == 64, "fa2_decode_tile's 64-row tile");
};

// The tile and splits of this launch, as the model plans them.
struct DecodePlan {
  TileShape tile;
  int splits = 1;
};

DecodePlan plan_of(const AttentionShape& shape) {
  const AttentionProblem problem = problem_of(shape);
  const CurrentDevice device = current_device();
  const KernelConfig config = fa2_decode_kernel.config_for(shape.head_dim, device.cc);
  const TileShape tile = fa2_decode_tile(
      problem,
      fa2_decode_kernel.tile_for(shape.head_dim, fa2_decode_kernel.min_compute_capability));
  return {tile, plan_kv_splits(problem, tile, device.sm_count, config.page_table_entries).splits};
}

// Calls body.template operator()<Cfg>() with the device's config for the
// shape's head dim, the plan's rows per CTA and the cache's layout.
template <typename Body>
cudaError_t with_decode_config(const AttentionShape& shape, const DecodePlan& plan, Body&& body) {
  return with_head_dim<fa2_decode_kernel>(shape.head_dim, [&]<int head_dim>() {
    return with_config_for<fa2_decode_kernel, head_dim>(
        current_device().cc, [&]<KernelConfig config>() {
          using Traits = DecodeTraits<head_dim, config>;
          if (shape.page_size > 0) {
            return plan.tile.br == 64 ? body.template operator()<typename Traits::Paged64>()
                                      : body.template operator()<typename Traits::Paged16>();
          }
          return plan.tile.br == 64 ? body.template operator()<typename Traits::Rows64>()
                                    : body.template operator()<typename Traits::Rows16>();
        });
  });
}

template <typename Cfg>
std::size_t workspace_for(const AttentionShape& shape, int splits) {
  return decode::workspace_bytes<Cfg>(shape.batch, shape.heads, shape.key_heads(), shape.seq_len,
                                      splits);
}

// A shape the plan can be made for: a head dim with a tile (the plan divides
// by the tile's keys).
bool plannable(const AttentionShape& shape) {
  return has_positive_dimensions(shape) && fa2_decode_kernel.supports_head_dim(shape.head_dim);
}

std::size_t fa2_decode_workspace(const AttentionShape& shape) {
  if (!plannable(shape)) return 0;
  const DecodePlan plan = plan_of(shape);
  std::size_t bytes = 0;
  (void)with_decode_config(shape, plan, [&]<typename Cfg>() {
    bytes = workspace_for<Cfg>(shape, plan.splits);
    return cudaSuccess;
  });
  return bytes;
}

template <typename T, typename Cfg>
cudaError_t launch_config(const AttentionShape& shape, const ForwardBuffers& io,
                          const LaunchContext& context, int splits) {
  if (workspace_for<Cfg>(shape, splits) > context.workspace_bytes) return cudaErrorInvalidValue;
  decode::DecodeParams<T> p{};
  p.q = static_cast<const T*>(io.q);
  p.k = static_cast<const T*>(io.k);
  p.v = static_cast<const T*>(io.v);
  p.o = static_cast<T*>(io.o);
  p.lse = io.lse;
  p.page_table = shape.page_size > 0 ? io.page_table : nullptr;
  p.pages_per_sequence = io.pages_per_sequence;
  p.page_shift = shape.page_size > 0 ? __builtin_ctz(static_cast<unsigned>(shape.page_size)) : 0;
  p.heads = shape.heads;
  p.kv_heads = shape.key_heads();
  p.group = shape.heads / shape.key_heads();
  p.q_len = shape.seq_len;
  p.kv_len = shape.keys();
  p.group_rows = p.group * shape.seq_len;
  p.causal = shape.causal;
  p.scale_log2 = softmax_scale_log2_of(shape);
  return decode::launch_decode<T, Cfg>(p, shape.batch, splits, context.workspace, context.stream);
}

cudaError_t launch_fa2_decode(const AttentionShape& shape, const ForwardBuffers& io,
                              const LaunchContext& context) {
  if (!forward_buffers_usable(io)) return cudaErrorInvalidValue;
  if (shape.page_size > 0 &&
      (io.page_table == nullptr || io.pages_per_sequence * shape.page_size < shape.keys())) {
    return cudaErrorInvalidValue;
  }
  if (!plannable(shape) || !(softmax_scale_log2_of(shape) > 0.f)) return cudaErrorInvalidValue;
  const DecodePlan plan = plan_of(shape);
  return dispatch_dtype_and_head_dim<fa2_decode_kernel>(shape, [&]<typename T, int>() {
    return with_decode_config(shape, plan, [&]<typename Cfg>() {
      return launch_config<T, Cfg>(shape, io, context, plan.splits);
    });
  });
}

}  // namespace

const ForwardKernel fa2_decode_launcher{fa2_decode_workspace, launch_fa2_decode};

}  // namespace cfr::kernels
