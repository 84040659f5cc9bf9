#include "roofline/model/kv_splits.hpp"

namespace cfr {

namespace {
constexpr std::int64_t min_tiles_per_split = 4;
}

KvSplitPlan plan_kv_splits(const AttentionProblem& problem, TileShape tile, int sm_count) {
  KvSplitPlan plan;
  const std::int64_t group_rows = problem.group() * problem.seq_len;
  const std::int64_t row_blocks = (group_rows + tile.br - 1) / tile.br;
  plan.groups = problem.kv_heads_total() * row_blocks;
  plan.key_tiles = (problem.keys() + tile.bc - 1) / tile.bc;
  const std::int64_t target = static_cast<std::int64_t>(sm_count) * (problem.paged() ? 2 : 1);
  while (plan.groups * plan.splits * 2 <= target &&
         plan.key_tiles / (plan.splits * 2) >= min_tiles_per_split) {
    plan.splits *= 2;
  }
  return plan;
}

}  // namespace cfr
