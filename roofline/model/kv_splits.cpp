#include "roofline/model/kv_splits.hpp"

#include <algorithm>

namespace cfr {

namespace {
constexpr std::int64_t min_tiles_per_split = 4;

// The most pages one split of `tiles_per_split` tiles touches, as the
// kernel counts them when it stages its split's page indices: splits start
// at multiples of the split's keys, the last one ends at the keys' end.
std::int64_t most_pages_of_a_split(std::int64_t keys, std::int64_t tiles_per_split, int bc,
                                   std::int64_t page_size) {
  const std::int64_t split_keys = tiles_per_split * bc;
  std::int64_t most = 0;
  for (std::int64_t first = 0; first < keys; first += split_keys) {
    const std::int64_t end = std::min(first + split_keys, keys);
    most = std::max(most, (end - 1) / page_size - first / page_size + 1);
  }
  return most;
}

KvSplitPlan plan_for_target(const AttentionProblem& problem, TileShape tile,
                            std::int64_t target_ctas) {
  KvSplitPlan plan;
  const std::int64_t group_rows = problem.group() * problem.seq_len;
  const std::int64_t row_blocks = (group_rows + tile.br - 1) / tile.br;
  plan.groups = problem.kv_heads_total() * row_blocks;
  plan.key_tiles = (problem.keys() + tile.bc - 1) / tile.bc;
  while (plan.groups * plan.splits * 2 <= target_ctas &&
         plan.key_tiles / (plan.splits * 2) >= min_tiles_per_split) {
    plan.splits *= 2;
  }
  return plan;
}
}  // namespace

KvSplitPlan plan_kv_splits(const AttentionProblem& problem, TileShape tile, int sm_count,
                           int page_table_entries) {
  const KvSplitPlan contiguous = plan_for_target(problem, tile, sm_count);
  if (!problem.paged()) return contiguous;
  const std::int64_t tiles_per_split =
      (contiguous.key_tiles + contiguous.splits - 1) / contiguous.splits;
  if (most_pages_of_a_split(problem.keys(), tiles_per_split, tile.bc, problem.page_size) <=
      page_table_entries) {
    return contiguous;
  }
  return plan_for_target(problem, tile, 2 * static_cast<std::int64_t>(sm_count));
}

}  // namespace cfr
