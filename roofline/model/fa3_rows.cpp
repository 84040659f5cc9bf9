#include "roofline/model/fa3_rows.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "roofline/core/shared_memo.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr {

namespace {

constexpr std::int64_t max_scheduled_tiles = 65536;
constexpr std::int64_t max_estimated_queries = std::int64_t{1} << 27;

}  // namespace

double persistent_makespan(std::span<const double> tile_costs, std::int64_t repeats, int ctas) {
  if (ctas < 1 || repeats < 1 || tile_costs.empty()) return 0;
  double total = 0;
  for (const double cost : tile_costs) total += cost;
  total *= static_cast<double>(repeats);
  // Past the listed tiles (checked before the product, which an edited
  // report's heads could overflow): the total over the CTAs.
  const auto listed = static_cast<std::int64_t>(tile_costs.size());
  if (repeats > max_scheduled_tiles / listed) return total / ctas;
  const std::int64_t tiles = listed * repeats;
  // Equal tiles (no mask): whole rounds, as the list below would give.
  if (std::all_of(tile_costs.begin(), tile_costs.end(),
                  [&](double cost) { return cost == tile_costs.front(); })) {
    return static_cast<double>((tiles + ctas - 1) / ctas) * tile_costs.front();
  }
  // Each tile's cost `repeats` times in a row: the heads side by side.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int cta = 0; cta < ctas; ++cta) free_at.push(0);
  double end = 0;
  for (const double cost : tile_costs) {
    for (std::int64_t r = 0; r < repeats; ++r) {
      const double done = free_at.top() + cost;
      free_at.pop();
      free_at.push(done);
      end = std::max(end, done);
    }
  }
  return end;
}

double fa3_wgmma_estimated_time(const AttentionProblem& problem, TileShape tile, int sm_count) {
  const std::int64_t q_len = problem.seq_len;
  const std::int64_t keys = problem.keys();
  const std::int64_t q_blocks = (q_len + tile.br - 1) / tile.br;
  const std::int64_t all_kv_blocks = (keys + tile.bc - 1) / tile.bc;
  const double row_time =
      static_cast<double>(tile.br) / 128 * (tile.br == fa3_tall_rows ? fa3_tall_row_time : 1.0);
  std::vector<double> costs;
  costs.reserve(static_cast<std::size_t>(q_blocks));
  // Heaviest first when causal: the Q blocks from the last.
  for (std::int64_t block = q_blocks - 1; block >= 0; --block) {
    std::int64_t kv_blocks = all_kv_blocks;
    if (problem.causal) {
      const std::int64_t last_row = std::min(q_len, (block + 1) * tile.br) - 1;
      kv_blocks = std::min(all_kv_blocks, (last_row + keys - q_len) / tile.bc + 1);
    }
    const double blocks = static_cast<double>(kv_blocks * tile.bc) / 128;
    costs.push_back((blocks + fa3_tile_fixed_blocks) * row_time);
  }
  return persistent_makespan(costs, problem.heads_total(), sm_count);
}

namespace {

// What the choice reads of a d 64 problem and the GPU: the launcher asks on
// every launch, and the list costs up to a few milliseconds on the host.
using ChoiceKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, int, int, int, int>;

bool tall_is_faster(const AttentionProblem& problem, TileShape tall, TileShape v7, int sm_count) {
  static SharedMemo<ChoiceKey, bool> memo(4096);
  const ChoiceKey key{problem.heads_total(),
                      problem.seq_len,
                      problem.keys(),
                      problem.causal,
                      tall.bc,
                      v7.br,
                      v7.bc,
                      sm_count};
  return memo.get(key, [&] {
    return fa3_wgmma_estimated_time(problem, tall, sm_count) <
           fa3_wgmma_estimated_time(problem, v7, sm_count);
  });
}

}  // namespace

TileShape fa3_wgmma_v8_tile(const AttentionProblem& problem, TileShape config_tile, int sm_count) {
  const TileShape v7 = fa3_wgmma_tile(problem, config_tile, sm_count);
  // Past 2^27 queries (134M tokens: a million Q blocks, whose costs the
  // estimate would list) revision 7's tile, so the rule stays bounded for any
  // row an edited report holds; the launcher takes the same.
  if (problem.head_dim != 64 || sm_count < 1 || problem.seq_len > max_estimated_queries) return v7;
  const TileShape tall{fa3_tall_rows, config_tile.bc};
  return tall_is_faster(problem, tall, v7, sm_count) ? tall : v7;
}

}  // namespace cfr
