#include "roofline/model/kv_splits.hpp"

namespace cfr {

namespace {
constexpr std::int64_t min_tiles_per_split = 4;

// The most pages a split of `tiles_per_split` tiles touches: its keys over
// whole pages, one more where it starts inside a page.
std::int64_t pages_per_split(std::int64_t tiles_per_split, int bc, std::int64_t page_size) {
  const std::int64_t keys = tiles_per_split * bc;
  return (keys + page_size - 1) / page_size + (keys % page_size != 0 ? 1 : 0);
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
  if (pages_per_split(tiles_per_split, tile.bc, problem.page_size) <= page_table_entries) {
    return contiguous;
  }
  return plan_for_target(problem, tile, 2 * static_cast<std::int64_t>(sm_count));
}

}  // namespace cfr
