#include "roofline/model/kernel_description.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cfr {

std::optional<TrafficModelKind> parse_traffic_model(std::string_view text) {
  for (TrafficModelKind kind :
       {TrafficModelKind::compulsory, TrafficModelKind::materialized, TrafficModelKind::kv_reload,
        TrafficModelKind::fa1_backward, TrafficModelKind::fa2_backward, TrafficModelKind::l2_aware,
        TrafficModelKind::plugin, TrafficModelKind::split_kv}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<std::string> shape_reason(const KernelDescription& kernel,
                                        const AttentionProblem& problem) {
  const ShapeSupport& can = kernel.shapes;
  // A served shape its flags refuse: the kernel's own reason where it has one.
  const auto refused = [&](std::string what) {
    if (can.served_shapes_reason.empty()) return what;
    return fmt::format("{}: {}", kernel.name, can.served_shapes_reason);
  };
  if (problem.keys() != problem.seq_len && !can.kv_len) {
    return refused(fmt::format("{} takes as many keys as queries (kv_len {} != seq_len {})",
                               kernel.name, problem.keys(), problem.seq_len));
  }
  if (problem.key_heads() != problem.heads && !can.kv_heads) {
    return refused(
        fmt::format("{} takes as many K/V heads as query heads (kv_heads {} != heads {})",
                    kernel.name, problem.key_heads(), problem.heads));
  }
  if (problem.paged() && !can.paged) {
    return refused(fmt::format("{} reads a contiguous K/V cache, not pages of {} tokens",
                               kernel.name, problem.page_size));
  }
  if (problem.paged() && (problem.page_size & (problem.page_size - 1)) != 0) {
    return fmt::format("{} takes pages of a power of two tokens, not {}", kernel.name,
                       problem.page_size);
  }
  if (can.max_q_len > 0 && problem.seq_len > can.max_q_len) {
    return fmt::format("{} is built for at most {} query tokens, not {}", kernel.name,
                       can.max_q_len, problem.seq_len);
  }
  return std::nullopt;
}

std::optional<std::string> below_minimum_reason(const KernelDescription& kernel,
                                                ComputeCapability cc) {
  if (kernel.runs_on(cc)) return std::nullopt;
  return fmt::format("{} needs compute capability {} or newer; this GPU has {}", kernel.name,
                     to_string(kernel.min_compute_capability), to_string(cc));
}

std::optional<std::string> grid_limit_reason(const KernelDescription& kernel,
                                             const AttentionProblem& problem, TileShape tile) {
  if (!tile.tiled()) return std::nullopt;
  constexpr char axis_names[] = {'x', 'y', 'z'};
  for (const GridLaunch& launch : kernel.launches) {
    const GridOrder order = grid_order_for(launch, problem.causal);
    for (int i = 0; i < 3; ++i) {
      const std::int64_t extent =
          blocks_along(order[i], problem.batch, problem.heads, problem.seq_len, tile);
      if (extent > max_grid_extent[i]) {
        return fmt::format("{}'s {} launch puts {} on blockIdx.{}: {} blocks, above CUDA's {}",
                           kernel.name, launch.pass, to_string(order[i]), axis_names[i], extent,
                           max_grid_extent[i]);
      }
    }
  }
  return std::nullopt;
}

std::vector<TileShape> tiles_on_any_arch(const KernelDescription& kernel, int head_dim) {
  std::vector<TileShape> tiles{kernel.tile_for(head_dim, kernel.min_compute_capability)};
  for (const ConfigRule& rule : kernel.configs) {
    const TileShape tile = kernel.tile_for(head_dim, rule.min_cc);
    if (rule.min_cc > kernel.min_compute_capability &&
        std::find(tiles.begin(), tiles.end(), tile) == tiles.end()) {
      tiles.push_back(tile);
    }
  }
  return tiles;
}

}  // namespace cfr
