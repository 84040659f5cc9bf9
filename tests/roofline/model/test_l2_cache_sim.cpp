#include <catch2/catch.hpp>

#include <stdexcept>

#include "roofline/model/l2_cache_sim.hpp"

using namespace cfr;

namespace {

// `groups` groups of `tiles` stream tiles of 100 bytes each.
StreamedLaunch launch_of(std::int64_t groups, std::int64_t tiles, std::int64_t concurrency,
                         std::vector<StreamedCta> ctas) {
  StreamedLaunch launch;
  launch.name = "test";
  launch.groups = groups;
  launch.tiles_per_group = tiles;
  launch.tile_bytes = [](std::int64_t, std::int64_t) { return 100.0; };
  launch.concurrency = concurrency;
  launch.ctas = std::move(ctas);
  return launch;
}

}  // namespace

TEST_CASE("one CTA: its tiles, private read and write; the write stays cached") {
  // 4 tiles x 100 B streamed once, 50 B read, 30 B written; 1000 B of cache holds everything.
  const LaunchTraffic t = simulate_launch(launch_of(1, 4, 1, {{0, 0, 4, 1, 50, 30}}), 1000);
  CHECK(t.stream_read_bytes == 400);
  CHECK(t.own_read_bytes == 50);
  CHECK(t.written_bytes == 0);
  CHECK(t.retained_dirty_bytes == 30);
  CHECK(t.dram_bytes() == 450);
  CHECK(t.eventual_dram_bytes() == 480);
}

TEST_CASE(
    "a CTA after another re-reads the group from DRAM only when the group outgrows the cache") {
  // One slot: CTA 1 starts when CTA 0 ends. 400 B of tiles: a 400 B cache keeps them all,
  // a 300 B LRU cache loses each tile just before it is needed again (cyclic access).
  const StreamedLaunch launch = launch_of(1, 4, 1, {{0, 0, 4, 1, 0, 0}, {0, 0, 4, 1, 0, 0}});
  CHECK(simulate_launch(launch, 400).stream_read_bytes == 400);
  CHECK(simulate_launch(launch, 300).stream_read_bytes == 800);
  CHECK(simulate_launch(launch, 300).stream_requested_bytes == 800);
}

TEST_CASE("CTAs that start together share each tile read, if one tile fits the cache") {
  // Two slots: both CTAs read tile j in step j. 100 B holds one tile: 400 B from DRAM;
  // 50 B holds none: each CTA reads its own, 800 B, which is the kv_reload count.
  const StreamedLaunch launch = launch_of(1, 4, 2, {{0, 0, 4, 1, 0, 0}, {0, 0, 4, 1, 0, 0}});
  CHECK(simulate_launch(launch, 100).stream_read_bytes == 400);
  CHECK(simulate_launch(launch, 50).stream_read_bytes == 800);
}

TEST_CASE("list scheduling: a free slot takes the next CTA, which reads behind the long one") {
  // Two slots; CTA 0 streams tiles 0..3 in steps 0..3; CTAs 1, 2, 3 read tile 0 in steps 0, 1, 2
  // on the other slot. A one-tile cache: step 0 tile 0 (miss, then a hit for CTA 1); step 1
  // tiles 1 and 0 (two misses); step 2 tiles 2 and 0 (two misses); step 3 tile 3 (a miss):
  // 6 misses. A four-tile cache: the 4 tiles once.
  const StreamedLaunch launch = launch_of(
      1, 4, 2, {{0, 0, 4, 1, 0, 0}, {0, 0, 1, 1, 0, 0}, {0, 0, 1, 1, 0, 0}, {0, 0, 1, 1, 0, 0}});
  CHECK(simulate_launch(launch, 100).stream_read_bytes == 600);
  CHECK(simulate_launch(launch, 400).stream_read_bytes == 400);
}

TEST_CASE("written blocks reach DRAM when evicted; the last ones stay dirty in the cache") {
  // One slot, three CTAs on their own groups: each reads one 100 B tile and writes 100 B.
  // 250 B of cache: CTA 1's tile evicts tile 0, its write evicts write 0 (100 B to DRAM);
  // CTA 2 likewise evicts tile 1 and write 1. Written 200, write 2 retained.
  const StreamedLaunch launch =
      launch_of(3, 1, 1, {{0, 0, 1, 1, 0, 100}, {1, 0, 1, 1, 0, 100}, {2, 0, 1, 1, 0, 100}});
  const LaunchTraffic t = simulate_launch(launch, 250);
  CHECK(t.stream_read_bytes == 300);
  CHECK(t.written_bytes == 200);
  CHECK(t.retained_dirty_bytes == 100);
  // No cache: every write goes straight to DRAM.
  CHECK(simulate_launch(launch, 0).written_bytes == 300);
}

TEST_CASE("passes re-stream a CTA's range: hits when it fits, misses when cyclic") {
  const StreamedLaunch launch = launch_of(1, 2, 1, {{0, 0, 2, 2, 0, 0}});
  CHECK(simulate_launch(launch, 200).stream_read_bytes == 200);
  CHECK(simulate_launch(launch, 100).stream_read_bytes == 400);
}

TEST_CASE("requested bytes: each CTA's range, every pass, hit or miss, whatever the cache") {
  // Tile t of group g has 10 g + t bytes. CTA 0 reads tiles [1, 4) of group 0 twice, CTAs 1
  // and 2 (merged: same start, group and range) tiles [2, 5) of group 1 once, CTA 3 nothing.
  StreamedLaunch launch = launch_of(
      2, 5, 4, {{0, 1, 3, 2, 0, 0}, {1, 2, 3, 1, 0, 0}, {1, 2, 3, 1, 0, 0}, {1, 0, 0, 1, 0, 0}});
  launch.tile_bytes = [](std::int64_t group, std::int64_t tile) {
    return static_cast<double>(10 * group + tile);
  };
  const double expected = 2 * (1 + 2 + 3) + 2 * (12 + 13 + 14);
  for (const double cache : {0.0, 20.0, 1e6}) {
    CHECK(simulate_launch(launch, cache).stream_requested_bytes == expected);
  }
}

TEST_CASE("a CTA that streams nothing holds its slot one step and only reads and writes its own") {
  const StreamedLaunch launch = launch_of(1, 0, 1, {{0, 0, 0, 1, 10, 20}, {0, 0, 0, 1, 10, 20}});
  const LaunchTraffic t = simulate_launch(launch, 1000);
  CHECK(t.own_read_bytes == 20);
  CHECK(t.stream_read_bytes == 0);
  CHECK(t.retained_dirty_bytes == 40);
}

TEST_CASE("a launch past max_simulated_steps is simulated with stream tiles merged in pairs") {
  // 2^19 + 1 CTAs of 64 tiles each: 2^25 + 64 steps, just past the limit, so tiles go in pairs
  // (32 merged tiles of 200 B). All start together on one slot each: the 6400 B are read once.
  const std::vector<StreamedCta> ctas((std::int64_t{1} << 19) + 1, StreamedCta{0, 0, 64, 1, 0, 0});
  const LaunchTraffic t = simulate_launch(launch_of(1, 64, std::int64_t{1} << 20, ctas), 1e6);
  CHECK(t.tile_group == 2);
  CHECK(t.stream_read_bytes == 6400);
  CHECK(simulate_launch(launch_of(1, 64, 1, {{0, 0, 64, 1, 0, 0}}), 1e6).tile_group == 1);
}

TEST_CASE("a malformed launch is rejected with the launch named") {
  CHECK_THROWS_WITH(simulate_launch(launch_of(1, 4, 1, {{0, 2, 3, 1, 0, 0}}), 100),
                    "launch 'test': CTA reads tiles [2, 5) of group 0; the launch has 1 groups "
                    "of 4 tiles");
  CHECK_THROWS_WITH(simulate_launch(launch_of(1, 4, 0, {}), 100),
                    "launch 'test': concurrency 0 is not positive");
  CHECK_THROWS_WITH(simulate_launch(launch_of(1, 4, 1, {}), -1),
                    "launch 'test': cache capacity -1 is negative");
}

TEST_CASE("a drifted schedule: two CTAs of one group started apart each read the stream") {
  // 4 tiles of 100 B, 200 B of cache, 2 slots. Together they share every
  // read (400 B); started 2 steps apart (stagger 4 over 2 slots), the tile
  // the second CTA wants was evicted by the first's later reads (800 B).
  StreamedLaunch launch = launch_of(1, 4, 2, {{0, 0, 4, 1, 0, 0}, {0, 0, 4, 1, 0, 0}});
  CHECK(simulate_launch(launch, 200).stream_read_bytes == 400);
  launch.stagger_steps = 4;
  CHECK(simulate_launch(launch, 200).stream_read_bytes == 800);
  // A cache that holds the stream serves the late CTA whatever the drift.
  CHECK(simulate_launch(launch, 400).stream_read_bytes == 400);
}
