// kernels/fa3_tiles.hpp on the CPU: which rows, head, K/V head and K/V blocks
// each of fa3_wgmma's persistent tiles holds (the catalog's launch order:
// groups of heads one after another, each group's Q blocks with its heads
// fastest, a group of one head being Q blocks fastest; causal heaviest first;
// bottom-right causal where Nq < Nk), and the ring slot and phase of each K/V
// block of a CTA's run, against counts done by hand for the shapes named.

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

#include "kernels/fa3_tiles.hpp"

using namespace cfr::kernels::fa3;

namespace {
constexpr TileShapeArgs tile_128{.br = 128, .bc = 128, .heaviest_first = true};

// docs/perf-notes.md's list-scheduling sketch of a causal run: the tiles in
// index order, each taken by the first of `ctas` CTAs to be free and costing
// its K/V blocks plus 1.5 blocks (Q load, O store); the run's end over the
// balanced end (the total cost spread evenly).
double end_over_balanced(int q_len, int heads, int heads_per_group, int ctas) {
  TileShapeArgs shape = tile_128;
  shape.heads_per_group = heads_per_group;
  const int tiles = (q_len + shape.br - 1) / shape.br * heads;
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int cta = 0; cta < ctas; ++cta) free_at.push(0);
  double total = 0;
  double end = 0;
  for (int tile = 0; tile < tiles; ++tile) {
    const double cost = tile_work(tile, q_len, q_len, 1, true, shape).kv_blocks + 1.5;
    const double done = free_at.top() + cost;
    free_at.pop();
    free_at.push(done);
    total += cost;
    end = std::max(end, done);
  }
  return end / (total / ctas);
}
}  // namespace

TEST_CASE("tiles walk one head's Q blocks first, causal from the last block") {
  // N 1000: 8 Q blocks of 128 rows (the last 104 rows), 8 K/V blocks.
  CHECK(tile_work(0, 1000, 1000, 1, false, tile_128) == TileWork{0, 0, 0, 8, 0});
  CHECK(tile_work(7, 1000, 1000, 1, false, tile_128) == TileWork{896, 0, 0, 8, 0});
  CHECK(tile_work(8, 1000, 1000, 1, false, tile_128) == TileWork{0, 1, 1, 8, 0});
  // Causal: tile 0 is the last block (rows 896-999 see all 8 K/V blocks),
  // tile 7 the first (rows 0-127 see block 0 only).
  CHECK(tile_work(0, 1000, 1000, 1, true, tile_128) == TileWork{896, 0, 0, 8, 0});
  CHECK(tile_work(7, 1000, 1000, 1, true, tile_128) == TileWork{0, 0, 0, 1, 0});
  CHECK(tile_work(9, 1000, 1000, 1, true, tile_128) == TileWork{768, 1, 1, 7, 0});
  // The order the natural one would take: no reversal.
  CHECK(tile_work(0, 1000, 1000, 1, true, {.br = 128, .bc = 128}).q0 == 0);
}

TEST_CASE("grouped heads: a group's heads side by side, its Q blocks heaviest first") {
  // 4 heads in groups of 2, N 1000 (8 Q blocks): tiles 0-15 are heads 0-1,
  // tile 0 head 0's last block, tile 1 head 1's, tile 2 head 0's block 6 ...;
  // tile 16 starts heads 2-3.
  TileShapeArgs grouped = tile_128;
  grouped.heads_per_group = 2;
  CHECK(tile_work(0, 1000, 1000, 1, true, grouped) == TileWork{896, 0, 0, 8, 0});
  CHECK(tile_work(1, 1000, 1000, 1, true, grouped) == TileWork{896, 1, 1, 8, 0});
  CHECK(tile_work(2, 1000, 1000, 1, true, grouped) == TileWork{768, 0, 0, 7, 0});
  CHECK(tile_work(15, 1000, 1000, 1, true, grouped) == TileWork{0, 1, 1, 1, 0});
  CHECK(tile_work(16, 1000, 1000, 1, true, grouped) == TileWork{896, 2, 2, 8, 0});
  CHECK(tile_work(19, 1000, 1000, 1, false, grouped) == TileWork{128, 3, 3, 8, 0});
  // GQA: a group of 2 K/V heads is 8 query heads at 4 per K/V head; tile 13
  // is Q block 1 of head 5 (K/V head 1), tile 64 the next group's first.
  grouped.heads_per_group = 8;
  CHECK(tile_work(13, 1000, 1000, 4, false, grouped) == TileWork{128, 5, 1, 8, 0});
  CHECK(tile_work(64, 1000, 1000, 4, false, grouped) == TileWork{0, 8, 2, 8, 0});
}

TEST_CASE("causal runs on 132 CTAs: heads side by side end balanced, Q blocks fastest late") {
  // v4's order (groups of one head) against v5's groups on the H200
  // (kv_heads_per_group at d 128: 4 heads at N 4K, 2 at N 8K, 1 at N 16K).
  CHECK(end_over_balanced(4096, 8, 1, 132) == Approx(1.547).margin(0.001));
  CHECK(end_over_balanced(4096, 8, 4, 132) < 1.01);
  CHECK(end_over_balanced(8192, 8, 1, 132) == Approx(1.228).margin(0.001));
  CHECK(end_over_balanced(8192, 8, 2, 132) < 1.01);
  CHECK(end_over_balanced(16384, 8, 1, 132) < 1.01);
  CHECK(end_over_balanced(4096, 32, 1, 132) == Approx(1.132).margin(0.001));
  CHECK(end_over_balanced(4096, 32, 4, 132) < 1.01);
}

TEST_CASE("every (Q block, head) is exactly one tile, in groups of any size") {
  constexpr int q_len = 4097;
  constexpr int heads = 6;
  constexpr int q_blocks = (q_len + 127) / 128;  // 33
  for (int heads_per_group : {1, 2, 3, 6}) {
    INFO("heads per group " << heads_per_group);
    TileShapeArgs grouped = tile_128;
    grouped.heads_per_group = heads_per_group;
    std::vector<int> seen(static_cast<std::size_t>(q_blocks * heads), 0);
    int previous_blocks = q_blocks + 1;
    for (int tile = 0; tile < q_blocks * heads; ++tile) {
      const TileWork work = tile_work(tile, q_len, q_len, 1, true, grouped);
      REQUIRE(work.q0 % 128 == 0);
      ++seen[static_cast<std::size_t>(work.head * q_blocks + work.q0 / 128)];
      // Within a group the causal work never grows: the heaviest tiles first.
      if (tile % (heads_per_group * q_blocks) == 0) previous_blocks = q_blocks + 1;
      CHECK(work.kv_blocks <= previous_blocks);
      previous_blocks = work.kv_blocks;
    }
    for (int count : seen) CHECK(count == 1);
  }
}

TEST_CASE("GQA heads read their group's K/V head; causal is bottom-right aligned") {
  // 8 query heads over 2 K/V heads: heads 0-3 read K/V head 0, 4-7 head 1;
  // batch 1's head 0 (combined index 8) reads combined K/V head 2.
  CHECK(tile_work(3, 100, 100, 4, false, tile_128).kv_head == 3 / 4);
  CHECK(tile_work(5, 100, 100, 4, false, tile_128).kv_head == 1);
  CHECK(tile_work(8, 100, 100, 4, false, tile_128).kv_head == 2);
  // 200 queries against 1000 keys: row i sees keys up to i + 800. The last
  // Q block (rows 128-199) sees up to key 999, all 8 blocks; the first
  // (rows 0-127) up to key 927, blocks 0-7 as well; at 1100 keys (shift 900)
  // the first block's rows see up to key 1027: 9 blocks of the 9.
  CHECK(tile_work(0, 200, 1000, 1, true, tile_128) == TileWork{128, 0, 0, 8, 800});
  CHECK(tile_work(1, 200, 1000, 1, true, tile_128) == TileWork{0, 0, 0, 8, 800});
  CHECK(tile_work(1, 200, 1100, 1, true, tile_128).kv_blocks == 9);
  // 17 queries, 300 keys: rows 0-16 see up to key 299 (shift 283): 3 blocks.
  CHECK(tile_work(0, 17, 300, 1, true, tile_128) == TileWork{0, 0, 0, 3, 283});
  CHECK(tile_work(0, 17, 100, 1, false, tile_128).kv_blocks == 1);
}

TEST_CASE("the K/V ring runs on across tiles: slot n % stages, phase flips each lap") {
  CHECK(ring_position(0, 2) == RingPosition{0, 0});
  CHECK(ring_position(1, 2) == RingPosition{1, 0});
  CHECK(ring_position(2, 2) == RingPosition{0, 1});
  CHECK(ring_position(5, 2) == RingPosition{1, 0});
  CHECK(ring_position(7, 3) == RingPosition{1, 0});
  CHECK(ring_position(4, 3) == RingPosition{1, 1});
}
