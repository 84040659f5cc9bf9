#pragma once

// How tall fa3_wgmma's Q blocks are at d 64 (catalog revision 8): 192 rows
// (three consumer warpgroups, FlashAttention-3's d 64 tile) where the SMs'
// rounds of tiles let its faster rows pay, 128 rows otherwise. A 192-row
// tile runs its rows 9 % faster, but a launch of fewer, longer tiles leaves
// more of its last round idle: on B1 H8 N 16K without a mask 688 tiles take
// 6 rounds of 132 SMs where 1024 of 128 rows take 8, a third longer each
// (docs/perf-notes.md, "v8").

#include <cstdint>
#include <span>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_description.hpp"

namespace cfr {

// The estimate's two figures, fit to one H100 session's timings of both
// heights on 12 shapes (results/h100/fa3-br192-79518c2/): a tile's fixed
// cost (its Q load, the first S and last P V not overlapped, O's store) in
// 128-key blocks, and the time of a 192-row tile's row against a 128-row
// tile's.
inline constexpr double fa3_tile_fixed_blocks = 4;
inline constexpr int fa3_tall_rows = 192;
inline constexpr double fa3_tall_row_time = 0.91;

// The time the persistent CTAs take over the tiles whose costs are listed
// in launch order: each of `ctas` takes the next tile when it finishes one
// (list scheduling, as the kernel's counter hands them out). Past 65536
// tiles, total / ctas (every CTA runs hundreds of tiles, and the last
// round's idle share is under 0.2 %).
double persistent_makespan(std::span<const double> tile_costs, std::int64_t repeats, int ctas);

// fa3_wgmma's estimated time for `problem` with `tile` on `sm_count` SMs,
// in units of one 128-row tile's 128-key block: every (head, Q block) tile
// costs (its K/V blocks x bc / 128 + fa3_tile_fixed_blocks) x br / 128,
// x fa3_tall_row_time at 192 rows; causal tiles heaviest first.
double fa3_wgmma_estimated_time(const AttentionProblem& problem, TileShape tile, int sm_count);

// Revision 8's rule: at d 64 with a known SM count and at most 2^27
// queries, 192 x 128 where its estimated time is below that of revision 7's
// tile (fa3_wgmma_tile); otherwise revision 7's tile.
TileShape fa3_wgmma_v8_tile(const AttentionProblem& problem, TileShape config_tile, int sm_count);

}  // namespace cfr
