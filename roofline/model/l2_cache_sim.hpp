#pragma once

// A tile-granular simulation of one kernel launch through a least-recently-used
// cache: the engine of the L2-aware DRAM model (docs/model.md, "L2-aware DRAM
// bytes"). It knows nothing of attention; l2_traffic_model.hpp describes each
// attention kernel as a StreamedLaunch.
//
// A launch is a list of CTAs in dispatch order. Each CTA reads a private
// block once when it starts ("own read": a Q block), streams a range of
// shared tiles in order, one tile per time step ("stream": the K/V blocks of
// its head, which other CTAs of the head read too), and writes a private
// block when it ends ("own write": an O block). `concurrency` CTAs run at
// once; the next CTA in dispatch order takes the first slot that frees (list
// scheduling), so the start times follow from the dispatch order alone. A CTA
// holds its slot for tiles x passes steps (one step when it streams nothing).
//
// DRAM bytes are the cache's misses (reads) and its evictions of written
// lines. Written lines still in the cache when the launch ends are reported
// apart (retained_dirty_bytes): they reach DRAM later, outside the launch,
// which is what Nsight Compute measures per launch.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cfr {

// A launch whose CTAs stream more tiles in all than this is simulated with
// every 2^k consecutive stream tiles of a group merged into one (the smallest
// k that brings it under), which keeps the cost near a second at most; a CTA
// then reads whole merged tiles, so its range's ragged ends count in full.
// No launch of the H200 recording (tests/roofline/fixtures/ncu/) comes near.
inline constexpr std::int64_t max_simulated_steps = std::int64_t{1} << 25;

struct StreamedCta {
  std::int64_t group = 0;       // stream tiles are shared within a group (a head)
  std::int64_t first_tile = 0;  // first stream tile of the group this CTA reads
  std::int64_t tiles = 1;       // stream tiles read per pass, in order; 0: none
  int passes = 1;               // times the CTA streams its range (>= 1)
  double own_read_bytes = 0;    // read once at the start, by no other CTA
  double own_write_bytes = 0;   // written once at the end
};

struct StreamedLaunch {
  std::string name;
  std::int64_t groups = 0;
  std::int64_t tiles_per_group = 0;
  // Bytes of stream tile `tile` of `group`; called once per tile read.
  std::function<double(std::int64_t group, std::int64_t tile)> tile_bytes;
  std::vector<StreamedCta> ctas;  // in dispatch order; with cycles > 1, those of one cycle
  // The launch dispatches `ctas` this many times, each time with every group
  // moved `period_groups` further on, modulo `groups`: a grid whose heads are
  // alike is stated by one head's CTAs, not built, checked and stored for
  // every head. Above 1, period_ctas must be ctas.size().
  std::int64_t cycles = 1;
  std::int64_t concurrency = 1;  // CTAs resident at once (SMs x CTAs per SM)
  // The slots' first CTAs start spread evenly over this many steps instead of
  // all at step 0: a schedule whose CTAs have drifted apart (the interval's
  // high bound, docs/model.md "The interval").
  std::int64_t stagger_steps = 0;
  // Stream tiles are merged (max_simulated_steps) until the launch is at most
  // this many CTA-steps.
  std::int64_t max_steps = max_simulated_steps;
  // What repeats (docs/model.md, "Cost"). tile_bytes depends on a group only
  // through group modulo `tile_bytes_period` (0: on the group itself); the
  // simulation calls it with groups below that only. The CTA list is the same
  // every `period_ctas` CTAs with each group moved `period_groups` on, modulo
  // `groups` (0: no such claim; the simulation checks it and simulates a list
  // that does not repeat in full). Heads are disjoint tiles read alike, so
  // renaming them changes nothing the simulation counts: once its whole state
  // (cache, running CTAs, free slots) recurs renamed and shifted in time at two
  // period boundaries, every later cycle adds the same bytes, and the
  // simulation skips all whole cycles that remain. Exact for byte counts that
  // are whole numbers below 2^53 (every sum of them is then exact in a double).
  std::int64_t tile_bytes_period = 0;
  std::int64_t period_ctas = 0;
  std::int64_t period_groups = 0;
  // false: the reference the shortcuts must equal: every CTA of every cycle
  // listed, every step simulated, the lines group by group (tile_major off).
  bool skip_repeats = true;
  // The CTAs that run together read different groups at about the same tile
  // (heads dispatched fastest): the cache's lines are laid out tile by tile
  // instead of group by group, so that a step's reads sit together in memory.
  // Speed only: the counts are the same either way.
  bool tile_major = false;
};

struct LaunchTraffic {
  std::string name;
  double own_read_bytes = 0;          // DRAM reads of the CTAs' private blocks
  double stream_read_bytes = 0;       // DRAM reads of stream tiles (misses)
  double written_bytes = 0;           // dirty lines evicted during the launch
  double retained_dirty_bytes = 0;    // written lines still cached at the end
  double stream_requested_bytes = 0;  // every CTA's stream reads, hit or miss (its range x passes)
  std::int64_t tile_group = 1;        // stream tiles simulated as one (see max_simulated_steps)
  std::int64_t skipped_cycles = 0;    // repeats of the state not simulated (skip_repeats)

  double read_bytes() const { return own_read_bytes + stream_read_bytes; }
  // What a per-launch DRAM counter sees: reads plus evicted writes.
  double dram_bytes() const { return read_bytes() + written_bytes; }
  // Every byte that reaches DRAM eventually, the retained writes included.
  double eventual_dram_bytes() const { return dram_bytes() + retained_dirty_bytes; }
};

// Throws std::invalid_argument for a malformed launch (a tile out of its
// group's range, non-positive concurrency or capacity below zero). CTAs that
// start at the same step on the same group and first tile read each tile
// together: the first read misses or hits, the others hit when the tile fits
// the cache (a cache smaller than one tile sends every CTA's read to DRAM).
LaunchTraffic simulate_launch(const StreamedLaunch& launch, double cache_bytes);

}  // namespace cfr
