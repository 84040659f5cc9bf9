// fa3_wgmma's launcher: the kernel (kernels/fa3_wgmma.cuh) with the catalog's
// config per head dim, fp16 and bf16, the three tensor maps it copies Q, K
// and V through, and one persistent CTA per SM (at most one per tile) taking
// tiles from a counter in the workspace, its heads in groups sized by the
// device's L2 (the catalog's HeadGroups::fit_l2). Built for sm_90a only
// (kernels/meson.build); a map the driver refuses, a workspace too small, or
// shared memory the device does not grant fails the launch with a cudaError_t
// (and the reason in the context's failure message).

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/attention_launchers.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa3_wgmma.cuh"
#include "kernels/fa3_wgmma_rows.hpp"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/tensor_map.hpp"

namespace cfr::kernels {
namespace {

// The config of a head dim with Q blocks of `br` rows and K/V blocks of `bc`
// keys: the catalog's, or the tile its problem_tile gives a problem.
template <int head_dim, int br, int bc>
struct Fa3Traits {
  static constexpr KernelConfig config = arch_independent_config<fa3_wgmma_kernel, head_dim>();
  static constexpr GridLaunch launch = fa3_wgmma_kernel.launches[0];
  using Cfg = fa3::Fa3Config<head_dim, br, bc, config.stages, launch.order[0], launch.order[1],
                             launch.order[2], launch.causal_order>;
  static_assert(br != config.tile.br || Cfg::warps == config.warps,
                "the catalog's warps are the config tile's 3 warpgroups");
  static_assert(config.ctas_per_sm == 1, "setmaxnreg's budget is one CTA's 64K registers");
  static_assert((launch.order == GridOrder{GridAxis::heads, GridAxis::batch, GridAxis::q_blocks} &&
                 launch.head_groups == HeadGroups::fit_l2) ||
                    (launch.order ==
                         GridOrder{GridAxis::q_blocks, GridAxis::heads, GridAxis::batch} &&
                     launch.head_groups == HeadGroups::all),
                "work_of_tile walks groups of heads (batch x heads + head), each group's Q "
                "blocks, its heads fastest; a group of one head is Q blocks fastest");
};

template <typename T>
constexpr CUtensorMapDataType tensor_map_type() {
  return std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                   : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

// The scheduler's two counters (kernels/fa3_wgmma.cuh, Fa3Params).
constexpr std::size_t scheduler_bytes = 2 * sizeof(int);

std::size_t fa3_workspace_bytes(const AttentionShape&) {
  return scheduler_bytes;
}

template <typename T, typename Cfg>
cudaError_t launch_config(const AttentionShape& shape, const ForwardBuffers& io,
                          const LaunchContext& context) {
  const float scale_log2 = softmax_scale_log2_of(shape);
  if (!(scale_log2 > 0.f)) return cudaErrorInvalidValue;  // the raw-score row max needs scale > 0
  const RowTensor q{io.q,
                    tensor_map_type<T>(),
                    Cfg::head_dim,
                    shape.seq_len,
                    static_cast<std::int64_t>(shape.batch) * shape.heads,
                    wgmma::block_columns,
                    Cfg::br};
  RowTensor k = q;
  k.base = io.k;
  k.rows = shape.keys();
  k.planes = static_cast<std::int64_t>(shape.batch) * shape.key_heads();
  k.box_rows = Cfg::bc;
  RowTensor v = k;
  v.base = io.v;
  CUtensorMap q_map{};
  CUtensorMap k_map{};
  CUtensorMap v_map{};
  const std::array<std::pair<CUtensorMap*, const RowTensor*>, 3> maps{
      {{&q_map, &q}, {&k_map, &k}, {&v_map, &v}}};
  for (const auto& [map, tensor] : maps) {
    if (const cudaError_t status = encode_row_tensor(*map, *tensor, context.failure_message);
        status != cudaSuccess) {
      return status;
    }
  }
  const std::int64_t tiles = static_cast<std::int64_t>(shape.seq_len + Cfg::br - 1) / Cfg::br *
                             static_cast<std::int64_t>(heads_total(shape));
  if (tiles > INT_MAX) return cudaErrorInvalidValue;
  const CurrentDevice device = current_device();
  const int heads_per_kv_head = shape.heads / shape.key_heads();
  const std::int64_t kv_group =
      kv_heads_per_group(Fa3Traits<Cfg::head_dim, Cfg::br, Cfg::bc>::launch, problem_of(shape),
                         device.l2_bytes, l2_partitions_for(device.cc), 0, 0);
  // No groups is the catalog's Q blocks fastest: a group of one query head.
  const std::int64_t heads_per_group = kv_group > 0 ? kv_group * heads_per_kv_head : 1;
  const fa3::Fa3Params<T> params{static_cast<T*>(io.o),
                                 io.lse,
                                 shape.seq_len,
                                 shape.keys(),
                                 heads_per_kv_head,
                                 static_cast<int>(heads_per_group),
                                 shape.causal,
                                 scale_log2,
                                 static_cast<int>(tiles),
                                 static_cast<int*>(context.workspace)};
  // setmaxnreg only moves registers within the CTA's allocation, so the
  // consumers' increase waits forever unless the build gave every thread
  // enough for the producer's decrease to pay for it (168 on sm_90a: ptxas
  // may choose fewer than __launch_bounds__ allows).
  cudaFuncAttributes attributes{};
  CFR_CUDA_CHECK_NOEXCEPT(cudaFuncGetAttributes(&attributes, fa3::fa3_wgmma_forward<T, Cfg>));
  if (attributes.numRegs * Cfg::threads < Cfg::register_budget) {
    if (context.failure_message != nullptr) {
      *context.failure_message = "fa3_wgmma was built with " + std::to_string(attributes.numRegs) +
                                 " registers a thread, too few for its setmaxnreg split";
    }
    return cudaErrorInvalidConfiguration;
  }
  const auto ctas = static_cast<unsigned>(std::min<std::int64_t>(device.sm_count, tiles));
  return launch_kernel(fa3::fa3_wgmma_forward<T, Cfg>, dim3(ctas), Cfg::threads, Cfg::smem_bytes,
                       context.stream, q_map, k_map, v_map, params);
}

cudaError_t launch_fa3_wgmma(const AttentionShape& shape, const ForwardBuffers& io,
                             const LaunchContext& context) {
  return launch_fa3_wgmma_with_rows(0, shape, io, context);
}

}  // namespace

cudaError_t launch_fa3_wgmma_with_rows(int rows, const AttentionShape& shape,
                                       const ForwardBuffers& io, const LaunchContext& context) {
  if (!forward_buffers_usable(io) || context.workspace == nullptr ||
      context.workspace_bytes < scheduler_bytes) {
    return cudaErrorInvalidValue;
  }
  return dispatch_dtype_and_head_dim<fa3_wgmma_kernel>(shape, [&]<typename T, int head_dim>() {
    constexpr int full_mask_bc = fa3_wgmma_full_mask_bc(head_dim);
    constexpr TileShape config_tile = arch_independent_config<fa3_wgmma_kernel, head_dim>().tile;
    constexpr TileShape tall{fa3_tall_rows, config_tile.bc};
    const AttentionProblem problem = problem_of(shape);
    // The rule's tile; forced 192 rows, or 128 with revision 7's K/V blocks.
    TileShape tile{};
    if (rows == 0) {
      tile = fa3_wgmma_kernel.problem_tile(problem, config_tile, current_device().sm_count);
    } else if (rows == fa3_tall_rows) {
      tile = tall;
    } else if (rows == config_tile.br) {
      tile = fa3_wgmma_tile(problem, config_tile);
    }
    if constexpr (head_dim == 64) {
      if (tile == tall) {
        return launch_config<T, typename Fa3Traits<head_dim, tall.br, tall.bc>::Cfg>(shape, io,
                                                                                     context);
      }
    }
    if (tile == TileShape{config_tile.br, full_mask_bc}) {
      return launch_config<T, typename Fa3Traits<head_dim, config_tile.br, full_mask_bc>::Cfg>(
          shape, io, context);
    }
    if (tile == config_tile) {
      return launch_config<T, typename Fa3Traits<head_dim, config_tile.br, config_tile.bc>::Cfg>(
          shape, io, context);
    }
    return cudaErrorInvalidValue;  // a tile no instantiation runs (192 rows at d 128)
  });
}

const ForwardKernel fa3_wgmma_launcher{fa3_workspace_bytes, launch_fa3_wgmma};

}  // namespace cfr::kernels
