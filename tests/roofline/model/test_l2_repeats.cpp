// Pins the shortcuts of the L2 simulation (docs/model.md "Cost"): a launch
// whose heads repeat skips whole cycles and counts, to the last bit, what
// simulating every step counts; a launch that does not repeat as it claims is
// simulated in full; a grid stated as one head's CTAs dispatched per head
// (StreamedLaunch::cycles) and lines laid out tile by tile count what the
// whole list group by group counts. The model-level cases run the shapes of
// tests/roofline/fixtures/ncu/l2data-configs.txt and a corner of issue 23's
// 672-configuration sweep, on the H200's L2 and SMs (configs/gpus.json:
// 60 MiB, 2 partitions, 132 SMs), against the reference (skip_repeats off:
// every CTA listed, every step simulated), and every row of
// results/h200/profile/*.json against the figures its report recorded.

#include <catch2/catch.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/model/l2_cache_sim.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/ncu_fixtures.hpp"

using namespace cfr;

namespace {

// `heads` heads of `blocks` CTAs each, blocks fastest; CTA b of a head
// streams tiles [0, b + 1) of 64 (causal) or all 64, 100 B each.
StreamedLaunch heads_launch(std::int64_t heads, std::int64_t blocks, bool causal) {
  StreamedLaunch launch;
  launch.name = "heads";
  launch.groups = heads;
  launch.tiles_per_group = 64;
  launch.tile_bytes = [](std::int64_t, std::int64_t tile) { return 100.0 + tile % 3; };
  launch.concurrency = 8;
  for (std::int64_t head = 0; head < heads; ++head) {
    for (std::int64_t block = 0; block < blocks; ++block) {
      launch.ctas.push_back({head, 0, causal ? (block + 1) * 64 / blocks : 64, 1, 50, 70});
    }
  }
  launch.period_ctas = blocks;
  launch.period_groups = 1;
  launch.tile_bytes_period = 1;
  return launch;
}

// The same launch stated as one head's CTAs dispatched once per head.
StreamedLaunch as_cycles(const StreamedLaunch& launch) {
  StreamedLaunch cycles = launch;
  cycles.ctas.resize(static_cast<std::size_t>(launch.period_ctas));
  cycles.cycles = static_cast<std::int64_t>(launch.ctas.size()) / launch.period_ctas;
  return cycles;
}

void check_equal(const LaunchTraffic& skipped, const LaunchTraffic& full) {
  CHECK(skipped.own_read_bytes == full.own_read_bytes);
  CHECK(skipped.stream_read_bytes == full.stream_read_bytes);
  CHECK(skipped.written_bytes == full.written_bytes);
  CHECK(skipped.retained_dirty_bytes == full.retained_dirty_bytes);
  CHECK(skipped.stream_requested_bytes == full.stream_requested_bytes);
  CHECK(full.skipped_cycles == 0);
}

LaunchTraffic simulate_full(StreamedLaunch launch, double cache_bytes) {
  launch.skip_repeats = false;
  return simulate_launch(launch, cache_bytes);
}

L2ModelInputs h200() {
  return {62914560.0, 2, 132, ComputeCapability{9, 0}, "GPU table h200"};
}

// The point always; the interval where `interval` (its bounds are two more simulations).
void check_model(const KernelDescription& kernel, const AttentionProblem& problem,
                 bool interval_too = true) {
  INFO(kernel.name << " B " << problem.batch << " H " << problem.heads << " N " << problem.seq_len
                   << " d " << problem.head_dim << " causal " << problem.causal);
  const auto full = l2_aware_dram_simulated(kernel, problem, h200());
  const auto skipped = l2_aware_dram(kernel, problem, h200());
  REQUIRE(full.has_value() == skipped.has_value());
  if (!full) return;
  CHECK(skipped->read_bytes == full->read_bytes);
  CHECK(skipped->written_bytes == full->written_bytes);
  CHECK(skipped->retained_dirty_bytes == full->retained_dirty_bytes);
  if (!interval_too) return;
  const auto full_interval = l2_aware_interval_simulated(kernel, problem, h200());
  const auto interval = l2_aware_interval(kernel, problem, h200());
  REQUIRE(full_interval.has_value() == interval.has_value());
  if (!interval) return;
  CHECK(interval->low == full_interval->low);
  CHECK(interval->high == full_interval->high);
}

}  // namespace

TEST_CASE("heads that repeat: whole cycles skipped, every byte as the full simulation's") {
  // 32 heads of 16 CTAs on 8 slots; a head's 6.4 kB of tiles outgrow 1 kB of cache, and
  // 2 kB holds the tiles of the CTAs in flight.
  for (const bool causal : {false, true}) {
    for (const double cache : {1000.0, 2000.0, 1e6}) {
      INFO("causal " << causal << ", cache " << cache);
      const StreamedLaunch launch = heads_launch(32, 16, causal);
      const LaunchTraffic skipped = simulate_launch(launch, cache);
      // A cache that holds every head never repeats its state: nothing to skip.
      CHECK((skipped.skipped_cycles > 0) == (cache < 1e6));
      check_equal(skipped, simulate_full(launch, cache));
      StreamedLaunch drifted = launch;
      drifted.stagger_steps = 40;
      check_equal(simulate_launch(drifted, cache), simulate_full(drifted, cache));
    }
  }
}

TEST_CASE("a launch stated as one head's CTAs and cycles counts what the whole list counts") {
  // StreamedLaunch::cycles: the grid is not built per head; the simulation moves the group on.
  for (const bool causal : {false, true}) {
    for (const double cache : {1000.0, 2000.0, 1e6}) {
      for (const std::int64_t stagger : {0, 40}) {
        INFO("causal " << causal << ", cache " << cache << ", stagger " << stagger);
        StreamedLaunch listed = heads_launch(32, 16, causal);
        listed.stagger_steps = stagger;
        const StreamedLaunch cycles = as_cycles(listed);
        REQUIRE(cycles.ctas.size() == 16);
        const LaunchTraffic full = simulate_full(listed, cache);
        check_equal(simulate_full(cycles, cache), full);
        const LaunchTraffic skipped = simulate_launch(cycles, cache);
        check_equal(skipped, full);
        CHECK(skipped.skipped_cycles == simulate_launch(listed, cache).skipped_cycles);
      }
    }
  }
  // Groups moved on by 3 each cycle, modulo 32 (coprime: every group once).
  StreamedLaunch listed = heads_launch(32, 16, true);
  for (std::size_t i = 0; i < listed.ctas.size(); ++i) {
    listed.ctas[i].group = static_cast<std::int64_t>(i / 16) * 3 % 32;
  }
  listed.period_groups = 3;
  check_equal(simulate_launch(as_cycles(listed), 1000), simulate_full(listed, 1000));
  check_equal(simulate_full(as_cycles(listed), 1000), simulate_full(listed, 1000));
}

TEST_CASE("the cache's lines laid out tile by tile count what group by group counts") {
  // StreamedLaunch::tile_major is a memory layout: heads dispatched fastest
  // (CTA b of every head, then b + 1) and blocks fastest, skip on and off.
  for (const bool causal : {false, true}) {
    for (const double cache : {1000.0, 2000.0, 1e6}) {
      INFO("causal " << causal << ", cache " << cache);
      const StreamedLaunch blocks_fastest = heads_launch(32, 16, causal);
      StreamedLaunch heads_fastest = blocks_fastest;
      for (std::size_t i = 0; i < heads_fastest.ctas.size(); ++i) {
        heads_fastest.ctas[i] = blocks_fastest.ctas[i % 32 * 16 + i / 32];
      }
      heads_fastest.period_ctas = 1;  // alike when not causal
      for (StreamedLaunch launch : {blocks_fastest, heads_fastest}) {
        const LaunchTraffic groups = simulate_launch(launch, cache);
        const LaunchTraffic full = simulate_full(launch, cache);
        launch.tile_major = true;
        const LaunchTraffic tiles = simulate_launch(launch, cache);
        check_equal(tiles, full);
        check_equal(groups, full);
        CHECK(tiles.skipped_cycles == groups.skipped_cycles);
        check_equal(simulate_full(launch, cache), full);
      }
    }
  }
}

TEST_CASE("cycles of a list that is not one period are rejected") {
  StreamedLaunch launch = as_cycles(heads_launch(32, 16, false));
  launch.period_ctas = 8;
  CHECK_THROWS_WITH(simulate_launch(launch, 1000),
                    "launch 'heads': 32 cycles of 16 CTAs with a period of 8");
  launch.period_ctas = 16;
  launch.cycles = 0;
  CHECK_THROWS_WITH(simulate_launch(launch, 1000), "launch 'heads': 0 cycles");
}

TEST_CASE("a launch that does not repeat as it claims is simulated step by step") {
  StreamedLaunch launch = heads_launch(32, 16, false);
  launch.ctas[300].own_write_bytes = 71;  // one CTA of head 18 differs
  const LaunchTraffic traffic = simulate_launch(launch, 1000);
  CHECK(traffic.skipped_cycles == 0);
  check_equal(traffic, simulate_full(launch, 1000));
  // Tile bytes that repeat every 3 groups while groups move on by 1: no skip.
  launch = heads_launch(32, 16, false);
  launch.tile_bytes_period = 3;
  CHECK(simulate_launch(launch, 1000).skipped_cycles == 0);
}

TEST_CASE("tile_bytes is asked only for the groups below tile_bytes_period") {
  StreamedLaunch launch = heads_launch(32, 16, true);
  std::int64_t highest = -1;
  launch.tile_bytes = [&highest](std::int64_t group, std::int64_t) {
    highest = std::max(highest, group);
    return 100.0;
  };
  (void)simulate_full(launch, 1000);
  CHECK(highest == 0);
}

TEST_CASE("the model with repeats skipped equals the full simulation on the recorded shapes") {
  std::istringstream in(test::read_fixture("l2data-configs.txt"));
  int shapes = 0;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> parts;
    std::istringstream fields(line);
    for (std::string part; std::getline(fields, part, ':');) parts.push_back(part);
    REQUIRE(parts.size() == 7);
    const KernelDescription* kernel = find_kernel(parts[0]);
    REQUIRE(kernel != nullptr);
    const std::optional<DType> dtype = parse_dtype(parts[1]);
    REQUIRE(dtype.has_value());
    // The interval on every fourth shape keeps the test near a second.
    check_model(*kernel,
                {std::stoll(parts[2]), std::stoll(parts[3]), std::stoll(parts[4]),
                 std::stoll(parts[5]), parts[6] == "1", *dtype},
                shapes % 4 == 0);
    ++shapes;
  }
  CHECK(shapes == 120);
}

TEST_CASE("the model with repeats skipped equals the full simulation where the sweep skips") {
  // Heads fastest, full mask (fa2_mma: every wave alike), the naive softmax's
  // rows and the fa1 kernels' heads, at a batch x heads of issue 23's sweep.
  check_model(*find_kernel("fa2_mma"), {4, 32, 8192, 128, false, DType::bf16});
  check_model(*find_kernel("fa2_mma"), {4, 8, 8192, 32, true, DType::bf16});
  check_model(*find_kernel("naive"), {4, 8, 8192, 32, false, DType::bf16});
  check_model(*find_kernel("naive"), {4, 8, 8192, 32, true, DType::bf16});
  check_model(*find_kernel("fa1_wmma"), {4, 32, 8192, 32, true, DType::bf16});
}

TEST_CASE("the model with repeats skipped equals the full simulation over grouped heads") {
  // fa3_wgmma with its heads in groups sized by the L2 (HeadGroups::fit_l2,
  // v5's order, which the kernel takes when its catalog entry names it): on
  // the H200, groups of 4 (N 4K d 128, 2 MiB of K/V a head), 2 (N 8K), 1
  // (N 16K d 128: Q blocks fastest), all 8 (N 4K d 64); with GQA, groups of
  // K/V heads.
  static constexpr std::array<GridLaunch, 1> grouped{
      {{"forward",
        {GridAxis::heads, GridAxis::batch, GridAxis::q_blocks},
        CausalBlockOrder::heaviest_first,
        HeadGroups::fit_l2}}};
  KernelDescription fa3 = *find_kernel("fa3_wgmma");
  fa3.launches = grouped;
  check_model(fa3, {1, 8, 4096, 128, true, DType::fp16}, true);
  check_model(fa3, {1, 8, 8192, 128, true, DType::fp16}, false);
  check_model(fa3, {1, 8, 16384, 128, false, DType::fp16}, false);
  check_model(fa3, {1, 8, 4096, 64, true, DType::bf16}, false);
  check_model(fa3, {2, 32, 4096, 128, true, DType::fp16, 0, 8}, true);
}

TEST_CASE(
    "the backward's causal grid in head groups: shortcuts exact, one head a group is the old "
    "grid") {
  // fa2_bwd's main launch from revision 2 (HeadGroups::fill_slots under a
  // causal mask): on the H200's 132 SMs, one group of all 8 heads (N 4K, 32
  // K/V blocks a head), groups of 4 (N 8K), of 2 (N 16K), of 16 of 48 (B 3
  // H 16 N 1100: the GPU test's shape); GQA, groups of K/V heads.
  const KernelDescription& bwd = fa2_backward_kernel;
  check_model(bwd, {1, 8, 4096, 128, true, DType::fp16}, true);
  check_model(bwd, {1, 8, 8192, 64, true, DType::fp16}, false);
  check_model(bwd, {1, 8, 16384, 128, true, DType::fp16}, false);
  check_model(bwd, {3, 16, 1100, 64, true, DType::fp16}, true);
  check_model(bwd, {1, 32, 8192, 128, true, DType::bf16, 0, 8}, false);
  // Where a head's CTAs alone fill the GPU a group is one head, and walking
  // heads fastest in groups of one is walking K/V blocks fastest: revision
  // 2 counts what revision 1 counts, to the byte. With groups it differs.
  const L2ModelInputs h200{60.0 * (1 << 20), 2, 132, {9, 0}, "test"};
  const KernelDescription& v1 = *bwd.at_revision(1);
  const AttentionProblem long_causal{1, 4, 131072, 64, true, DType::fp16};
  CHECK(l2_aware_dram(bwd, long_causal, h200)->bytes() ==
        l2_aware_dram(v1, long_causal, h200)->bytes());
  const AttentionProblem short_causal{1, 8, 4096, 128, true, DType::fp16};
  CHECK(l2_aware_dram(bwd, short_causal, h200)->bytes() !=
        l2_aware_dram(v1, short_causal, h200)->bytes());
  const AttentionProblem full{1, 8, 4096, 128, false, DType::fp16};
  CHECK(l2_aware_dram(bwd, full, h200)->bytes() == l2_aware_dram(v1, full, h200)->bytes());
}

TEST_CASE("naive's softmax, simulated once for all head dims, is each head dim's own") {
  // The launch reads no head dim (l2_traffic_model.cpp: SoftmaxShape): d 32 simulates it,
  // d 64 and 128 take that answer, and each must equal its own reference simulation.
  for (const bool causal : {false, true}) {
    for (const std::int64_t d : {32, 64, 128}) {
      check_model(*find_kernel("naive"), {1, 8, 4096, d, causal, DType::fp16});
    }
    const auto d32 =
        l2_aware_dram(*find_kernel("naive"), {1, 8, 4096, 32, causal, DType::fp16}, h200());
    const auto d128 =
        l2_aware_dram(*find_kernel("naive"), {1, 8, 4096, 128, causal, DType::fp16}, h200());
    REQUIRE(d32->launches.size() == 3);
    CHECK(d32->launches[1].launch == "softmax");
    CHECK(d32->launches[1].read_bytes == d128->launches[1].read_bytes);
    CHECK(d32->launches[1].written_bytes == d128->launches[1].written_bytes);
    CHECK(d32->launches[0].read_bytes != d128->launches[0].read_bytes);  // Q K^T reads d
  }
}

TEST_CASE("every committed profiled row's L2-aware figures are the ones its report recorded") {
  // The reports were written by the tool before these shortcuts (and before
  // the interval, for some): the point, and the interval where recorded,
  // must come out to the last bit.
  int points = 0;
  int intervals = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(CFR_SOURCE_ROOT "/results/h200/profile")) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const Report report =
        report_from_json(nlohmann::json::parse(cfr::test::read_source_text(entry.path())));
    for (const ResultRow& row : report.results) {
      const KernelDescription* kernel = catalog_revision(row.kernel, row.kernel_revision);
      if (kernel == nullptr || !row.model || !row.model->l2_inputs) continue;
      const std::optional<double> recorded = row.model->bytes_of(TrafficModelKind::l2_aware);
      if (!recorded) continue;
      INFO(entry.path().filename().string()
           << ": " << row.kernel << " H " << row.problem.heads << " N " << row.problem.seq_len);
      const auto point = l2_aware_dram(*kernel, row.problem, *row.model->l2_inputs);
      REQUIRE(point);
      CHECK(point->bytes() == *recorded);
      ++points;
      if (!row.model->dram_interval) continue;
      CHECK(l2_aware_interval(*kernel, row.problem, *row.model->l2_inputs) ==
            row.model->dram_interval);
      ++intervals;
    }
  }
  CHECK(points >= 140);
  CHECK(intervals >= 120);
}
