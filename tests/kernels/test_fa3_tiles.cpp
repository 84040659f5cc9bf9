// kernels/fa3_tiles.hpp on the CPU: which rows, head, K/V head and K/V blocks
// each of fa3_wgmma's persistent tiles holds (the catalog's launch order: Q
// blocks fastest, then heads and batch; causal heaviest first; bottom-right
// causal where Nq < Nk), and the ring slot and phase of each K/V block of a
// CTA's run, against counts done by hand for the shapes named.

#include <catch2/catch.hpp>

#include <vector>

#include "kernels/fa3_tiles.hpp"

using namespace cfr::kernels::fa3;

namespace {
constexpr TileShapeArgs tile_128{.br = 128, .bc = 128, .heaviest_first = true};
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

TEST_CASE("every (Q block, head) is exactly one tile") {
  constexpr int q_len = 4097;
  constexpr int heads = 3;
  constexpr int q_blocks = (q_len + 127) / 128;  // 33
  std::vector<int> seen(static_cast<std::size_t>(q_blocks * heads), 0);
  for (int tile = 0; tile < q_blocks * heads; ++tile) {
    const TileWork work = tile_work(tile, q_len, q_len, 1, true, tile_128);
    REQUIRE(work.q0 % 128 == 0);
    ++seen[static_cast<std::size_t>(work.head * q_blocks + work.q0 / 128)];
  }
  for (int count : seen) CHECK(count == 1);
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
