#include <catch2/catch.hpp>

#include <stdexcept>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/model/l2_traffic_model.hpp"
#include "roofline/model/traffic_model.hpp"

using namespace cfr;

namespace {

constexpr double mib = 1024.0 * 1024.0;
// An H200 as Nsight Compute reports it: 60 MiB of L2 in two partitions, 132 SMs.
const L2Config h200_l2{60 * mib, 2};
// fa2_mma's d = 128 launch: Br 128, Bc 64, 2 CTAs per SM, heaviest causal block first.
const LaunchGeometry fa2_d128{{128, 64}, 2, 132, blocks_fastest, CausalBlockOrder::heaviest_first};

double matrix_bytes(const AttentionProblem& p) {
  return static_cast<double>(p.heads_total() * p.seq_len * p.head_dim * element_bytes(p.dtype));
}

double lse_bytes(const AttentionProblem& p) {
  return static_cast<double>(p.heads_total() * p.seq_len) * 4;
}

// K and V bytes read, as a multiple of reading each once.
double kv_read_factor(const DramEstimate& e, const AttentionProblem& p) {
  return (e.read_bytes - matrix_bytes(p)) / (2 * matrix_bytes(p));
}

}  // namespace

TEST_CASE("no L2 to speak of: the forward model is the kv_reload count, causal or not") {
  // Ragged N (1000 = 15 blocks of 64 and 40 rows) and several heads and batches; a 1-byte L2
  // holds no tile, so every CTA reads its own K/V and every write goes to DRAM.
  for (bool causal : {false, true}) {
    const AttentionProblem p{2, 3, 1000, 64, causal, DType::fp16};
    const LaunchGeometry geometry{{64, 32}, 2, 4};
    const DramEstimate e = flash_forward_dram(p, geometry, {1, 1});
    const TrafficEstimate reload =
        estimate_traffic(p, Direction::forward, TrafficModelKind::kv_reload, {64, 32});
    CHECK(e.bytes() == reload.bytes);
    CHECK(e.retained_dirty_bytes == 0);
  }
}

TEST_CASE("no L2 to speak of: the backward model is the fa1_backward count") {
  for (bool causal : {false, true}) {
    const AttentionProblem p{1, 2, 500, 64, causal, DType::bf16};
    const LaunchGeometry geometry{{64, 64}, 2, 4};
    const DramEstimate e = flash_backward_dram(p, geometry, geometry, {1, 1});
    const TrafficEstimate model =
        estimate_traffic(p, Direction::backward, TrafficModelKind::fa1_backward, {64, 64});
    CHECK(e.bytes() == Approx(model.bytes).epsilon(1e-12));
    REQUIRE(e.launches.size() == 3);
    CHECK(e.launches[0].launch == "row_dot");
    CHECK(e.launches[1].launch == "dk_dv");
    CHECK(e.launches[2].launch == "dq");
  }
}

TEST_CASE(
    "no L2 to speak of: fa2_bwd's model is the fa2_backward count, the atomics written once") {
  // The byte model counts each K/V block's read-modify-write of the dQ
  // accumulator; the simulation reads it per K/V block and writes it back
  // once per query head (its CTAs' shares), the read-modify-write staying in
  // L2. Square, and 4 query heads over 2 K/V heads and over 1: a CTA of a K/V
  // head reads its K/V block once and streams the Q blocks of every query
  // head of its group, so with no L2 the simulation reads what the model counts.
  AttentionProblem square{1, 2, 500, 64, false, DType::bf16};
  AttentionProblem gqa{2, 4, 500, 64, false, DType::bf16};
  gqa.kv_heads = 2;
  AttentionProblem mqa = gqa;
  mqa.kv_heads = 1;
  for (AttentionProblem p : {square, gqa, mqa}) {
    for (bool causal : {false, true}) {
      p.causal = causal;
      const TileShape tile{64, 128};
      const LaunchGeometry geometry{tile, 1, 4};
      const DramEstimate e = fa2_backward_dram(p, geometry, geometry, geometry, {1, 1});
      const TrafficEstimate model =
          estimate_traffic(p, Direction::backward, TrafficModelKind::fa2_backward, tile);
      const double accumulator_row = 64 * 4;
      const auto query_heads = static_cast<double>(p.heads_total());
      // The model's atomics write what they read; the simulation writes back once.
      const double atomic_writes =
          query_heads * q_rows_loaded_per_head(500, tile, causal) * accumulator_row;
      const double write_back = query_heads * 500 * accumulator_row;
      CHECK(e.bytes() == Approx(model.bytes - atomic_writes + write_back).epsilon(1e-12));
      CHECK(e.retained_dirty_bytes == 0);
      REQUIRE(e.launches.size() == 3);
      CHECK(e.launches[0].launch == "prepass");
      CHECK(e.launches[1].launch == "dk_dv_dq");
      CHECK(e.launches[2].launch == "dq_convert");
    }
  }
}

TEST_CASE("an L2 that holds everything, GQA: fa2_bwd reads each tensor once a launch") {
  // Each launch starts cold: the pre-pass reads O and dO and leaves D and the
  // zeroed accumulator in L2; the main launch reads K and V once per K/V head
  // and Q, dO, LSE, D and the accumulator once per query head, its dK, dV and
  // accumulator left in L2; the convert reads the accumulator, writes dQ.
  for (bool causal : {false, true}) {
    AttentionProblem p{1, 8, 1000, 64, causal, DType::fp16};
    p.kv_heads = 2;
    const LaunchGeometry geometry{{64, 128}, 1, 132};
    const DramEstimate e = fa2_backward_dram(p, geometry, geometry, geometry, {1e12, 2});
    const double q = 8 * 1000 * 64 * 2.0;   // Q, O, dO or dQ of every query head
    const double kv = 2 * 1000 * 64 * 2.0;  // K, V, dK or dV of every K/V head
    const double rows = 8 * 1000 * 4.0;     // LSE or D
    const double accumulator = 8 * 1000 * 64 * 4.0;
    REQUIRE(e.launches.size() == 3);
    CHECK(e.launches[0].read_bytes == 2 * q);
    CHECK(e.launches[1].read_bytes == 2 * kv + 2 * q + 2 * rows + accumulator);
    CHECK(e.launches[1].retained_dirty_bytes == 2 * kv + accumulator);
    CHECK(e.launches[2].read_bytes == accumulator);
    CHECK(e.written_bytes == 0);
    const TrafficEstimate compulsory =
        estimate_traffic(p, Direction::backward, TrafficModelKind::compulsory, {});
    // The compulsory bytes, plus dO read twice, D written and read, and the
    // accumulator written, read and written by the main launch, and read.
    CHECK(e.eventual_bytes() == compulsory.bytes + q + 2 * rows + 4 * accumulator);
  }
}

TEST_CASE("an L2 that holds everything: each tensor once, the writes still in L2 at the end") {
  const AttentionProblem p{1, 4, 2048, 128, true, DType::fp16};
  const DramEstimate e = flash_forward_dram(p, fa2_d128, {1e12, 2});
  // Q, K, V read once; O and LSE written but not yet evicted.
  CHECK(e.read_bytes == 3 * matrix_bytes(p));
  CHECK(e.written_bytes == 0);
  CHECK(e.retained_dirty_bytes == matrix_bytes(p) + lse_bytes(p));
  const TrafficEstimate compulsory =
      estimate_traffic(p, Direction::forward, TrafficModelKind::compulsory, {});
  CHECK(e.eventual_bytes() == compulsory.bytes + lse_bytes(p));
}

TEST_CASE("the materialized path with an L2 that holds everything is the materialized count") {
  // S written and read once, P written and read once: the second softmax pass hits.
  const AttentionProblem p{1, 2, 512, 64, false, DType::fp16};
  const DramEstimate e = materialized_dram(p, {8, 8, 1, 128}, {1e12, 2});
  const TrafficEstimate model =
      estimate_traffic(p, Direction::forward, TrafficModelKind::materialized, {});
  CHECK(e.eventual_bytes() == model.bytes);
  // Causal: the softmax reads only each row's unmasked keys, N(N+1)/2 of the N^2 per head.
  AttentionProblem causal = p;
  causal.causal = true;
  const double masked_keys = 2.0 * (512.0 * 512.0 - 512.0 * 513.0 / 2) * 2;
  CHECK(materialized_dram(causal, {8, 8, 1, 128}, {1e12, 2}).eventual_bytes() ==
        model.bytes - masked_keys);
}

TEST_CASE("materialized on an H200: S stays in L2 at N = 1024, spills to DRAM at N = 4096") {
  // H = 8, d = 64: S is 8 x 1024^2 x 2 B = 16 MiB, under the 30 MiB each partition holds; at
  // N = 4096 it is 256 MiB, so all but the last ~30 MiB of S reach DRAM during the S = QK^T launch.
  const MaterializedGeometry naive{132, 8, 1, 128};
  const DramEstimate small =
      materialized_dram({1, 8, 1024, 64, false, DType::fp16}, naive, h200_l2);
  REQUIRE(small.launches[0].launch == "qk_gemm");
  CHECK(small.launches[0].written_bytes == 0);
  const DramEstimate large =
      materialized_dram({1, 8, 4096, 64, false, DType::fp16}, naive, h200_l2);
  CHECK(large.launches[0].written_bytes > (256 - 30) * mib);
  CHECK(large.launches[0].written_bytes < (256 - 20) * mib);
}

TEST_CASE("written S left in L2 at the end of S = QK^T: the H200 matches half its L2, not all") {
  // H = 8, N = 2048, d = 64: S is 64 MiB. On the H200 that launch wrote 40,666,880 B to DRAM
  // (l2data.csv, launch 3), leaving 26,441,984 B (25.2 MiB) of S in L2. The model leaves 24 MiB
  // with 30 MiB per partition; were the whole 60 MiB available to S it would leave 56 MiB.
  const AttentionProblem p{1, 8, 2048, 64, false, DType::fp16};
  const MaterializedGeometry naive{132, 8, 1, 128};
  CHECK(materialized_dram(p, naive, h200_l2).launches[0].retained_dirty_bytes == 24 * mib);
  CHECK(materialized_dram(p, naive, {120 * mib, 2}).launches[0].retained_dirty_bytes == 56 * mib);
}

TEST_CASE("heads dispatched fastest defeat the L2 that Q blocks fastest exploit") {
  // H = 32, N = 8192, d = 128: each head's K/V is 4 MiB, all heads' 128 MiB. Q blocks fastest:
  // about five heads run at once (264 CTAs, 64 per head), their K/V fit the 30 MiB, and K/V come
  // from DRAM a little more than once. Heads fastest: every wave of 264 CTAs runs 8 Q blocks of
  // all 32 heads, whose K/V do not fit: each of the 64 / 8 = 8 waves reads them all again.
  const AttentionProblem p{1, 32, 8192, 128, false, DType::fp16};
  LaunchGeometry heads_first_launch = fa2_d128;
  heads_first_launch.grid_order = heads_fastest;
  const double blocks_first = kv_read_factor(flash_forward_dram(p, fa2_d128, h200_l2), p);
  const double heads_first = kv_read_factor(flash_forward_dram(p, heads_first_launch, h200_l2), p);
  CHECK(blocks_first < 1.3);
  CHECK(heads_first == Approx(8.0));
}

TEST_CASE("concurrency above a head's Q blocks makes waves straddle heads whose K/V then reload") {
  // N = 32768, d = 128: 256 Q blocks and 16 MiB of K/V per head. 256 CTAs at once run exactly one
  // head: K/V once. 264 CTAs (the H200's 132 SMs x 2) straddle two heads, 32 MiB > 30 MiB, and
  // every head after the first comes from DRAM twice: (1 + 3 x 2) / 4 = 1.75, less the few
  // tiles still cached when the second wave reaches them (the H200 measured 1.7x for H = 32,
  // l2data row 100).
  const AttentionProblem p{1, 4, 32768, 128, false, DType::fp16};
  LaunchGeometry one_head = fa2_d128;
  one_head.sm_count = 128;
  CHECK(kv_read_factor(flash_forward_dram(p, one_head, h200_l2), p) == 1.0);
  CHECK(kv_read_factor(flash_forward_dram(p, fa2_d128, h200_l2), p) == Approx(1.75).margin(0.01));
}

TEST_CASE("heaviest causal Q blocks first keep long sequences near their compulsory K/V reads") {
  // N = 131072, d = 128 (64 MiB of K/V per head): heaviest first staggers the CTA ends so a
  // head's CTAs read its K/V close together; in natural order the short CTAs end early and
  // their successors, starting a few steps apart, each walk the K/V alone.
  const AttentionProblem p{1, 4, 131072, 128, true, DType::fp16};
  LaunchGeometry natural = fa2_d128;
  natural.causal_order = CausalBlockOrder::natural;
  const double heaviest = kv_read_factor(flash_forward_dram(p, fa2_d128, h200_l2), p);
  CHECK(heaviest < 3);
  CHECK(kv_read_factor(flash_forward_dram(p, natural, h200_l2), p) > 50 * heaviest);
}

TEST_CASE("at a capacity cliff the step budget's merged tiles change the answer several-fold") {
  // fa1_scalar's d = 128 launch in natural causal order (Br = Bc = 32, 2 CTAs per SM), N = 32768,
  // 16 MiB of K/V, on an L2 of 8 MiB a partition: a head's resident CTAs sit spread over its K/V
  // prefix and re-read it cyclically, so once the prefix outgrows the cache every read misses.
  // 524,800 CTA-steps: a budget of 2^20 simulates every tile, 2^18 merges them in pairs, which
  // puts CTAs of equal merged length in the same step, sharing reads the unmerged ones do not.
  // docs/model.md ("Limits") states this for the misses-causal-long rows (185 GB merged, 368 GB
  // with every tile), where the H200 read 44 GB: the point there is not to be believed.
  const AttentionProblem p{1, 1, 32768, 128, true, DType::fp16};
  const LaunchGeometry fa1_scalar_d128{{32, 32}, 2, 132, blocks_fastest};
  L2Config every_tile{16 * mib, 2};
  every_tile.max_steps = std::int64_t{1} << 20;
  L2Config pairs = every_tile;
  pairs.max_steps = std::int64_t{1} << 18;
  const double exact = kv_read_factor(flash_forward_dram(p, fa1_scalar_d128, every_tile), p);
  const double merged = kv_read_factor(flash_forward_dram(p, fa1_scalar_d128, pairs), p);
  INFO("K/V read " << exact << " times with every tile, " << merged << " with tiles in pairs");
  CHECK(exact == Approx(260.5).epsilon(0.01));
  CHECK(merged == Approx(66.9).epsilon(0.01));
}

TEST_CASE("more L2 never means more DRAM reads, and the model is deterministic") {
  const AttentionProblem p{1, 16, 16384, 64, false, DType::fp16};
  double previous = 1e300;
  for (double l2_mib : {1.0, 8.0, 30.0, 60.0, 240.0}) {
    const DramEstimate e = flash_forward_dram(p, fa2_d128, {l2_mib * mib, 1});
    CHECK(e.read_bytes <= previous);
    previous = e.read_bytes;
  }
  CHECK(flash_forward_dram(p, fa2_d128, h200_l2).bytes() ==
        flash_forward_dram(p, fa2_d128, h200_l2).bytes());
}

TEST_CASE("bad inputs are rejected with the bad value named") {
  const AttentionProblem p{1, 8, 1024, 64, false, DType::fp16};
  CHECK_THROWS_WITH(flash_forward_dram(p, {{0, 0}, 2, 132}, h200_l2),
                    "forward: needs a tile (Br 0, Bc 0), resident CTAs per SM (2) and SMs (132) "
                    "above 0");
  CHECK_THROWS_WITH(flash_forward_dram(p, fa2_d128, {60 * mib, 0}),
                    "L2 of 62914560 bytes in 0 partitions is not a cache");
  CHECK_THROWS_WITH(flash_forward_dram({1, 0, 1024, 64}, fa2_d128, h200_l2),
                    "attention problem dimensions must be positive");
  CHECK_THROWS_AS(materialized_dram(p, {0, 8, 1, 128}, h200_l2), std::invalid_argument);
  // The backward launches: fa1_bwd's square only, fa2_bwd's as many keys as queries.
  AttentionProblem gqa = p;
  gqa.kv_heads = 2;
  const LaunchGeometry bwd{{64, 128}, 1, 132};
  CHECK_THROWS_WITH(flash_backward_dram(gqa, bwd, bwd, h200_l2),
                    Catch::Contains("square self-attention only"));
  AttentionProblem longer = gqa;
  longer.kv_len = 2048;
  CHECK_THROWS_WITH(fa2_backward_dram(longer, bwd, bwd, bwd, h200_l2),
                    Catch::Contains("as many keys as queries"));
}

TEST_CASE("split-KV decoding reads each K/V byte from DRAM once per group, whatever the splits") {
  // 32 query heads over 8 K/V heads, 16 query tokens: 64 group rows in 4 blocks
  // of 16 that run side by side, so three of every four tile reads hit the L2.
  AttentionProblem p{2, 32, 16, 128, true, DType::fp16};
  p.kv_len = 8192;
  p.kv_heads = 8;
  const L2Config l2{60e6, 2};
  const LaunchGeometry geometry{
      {16, 64}, 2, 132, {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}};
  const double kv = 2.0 * 2 * 8 * 8192 * 256;  // K and V of every K/V head once
  const double q = 2.0 * 32 * 16 * 256;
  for (int splits : {1, 4, 16}) {
    INFO(splits << " splits");
    const DramEstimate d = split_kv_dram(p, geometry, splits, l2);
    // Reads: K/V once and Q once per split; nothing more within 0.1 %.
    CHECK(d.read_bytes == Approx(kv + splits * q).epsilon(1e-3));
  }
  // Writes: O and LSE with one split; each split's fp32 O / l and LSE with more.
  const DramEstimate one = split_kv_dram(p, geometry, 1, l2);
  CHECK(one.written_bytes + one.retained_dirty_bytes == Approx(2 * 32 * 16 * (256.0 + 4)));
  const DramEstimate four = split_kv_dram(p, geometry, 4, l2);
  CHECK(four.written_bytes + four.retained_dirty_bytes == Approx(4 * 2 * 32 * 16 * (129 * 4.0)));
}

TEST_CASE("kv_reload with GQA: the query heads of a K/V head share its tiles in the L2") {
  // fa2_mma's order (heads fastest): the 4 query heads of a group run side by
  // side and read their K/V head's tiles together, so GQA's K/V reads are a
  // quarter of those of 32 K/V heads (whatever the waves re-read), and Q, read
  // once, is the same.
  AttentionProblem mha{1, 32, 4096, 128, false, DType::fp16};
  AttentionProblem gqa = mha;
  gqa.kv_heads = 8;
  const LaunchGeometry geometry{{256, 64}, 1, 132, heads_fastest, CausalBlockOrder::natural};
  const double q = 32.0 * 4096 * 256;
  const double mha_kv = flash_forward_dram(mha, geometry, {60e6, 2}).read_bytes - q;
  const double gqa_kv = flash_forward_dram(gqa, geometry, {60e6, 2}).read_bytes - q;
  CHECK(gqa_kv > 0);
  CHECK(mha_kv / gqa_kv == Approx(4).epsilon(0.02));
}

TEST_CASE("the L2-aware model simulates fa2_bwd's GQA launches, as the registry lays them out") {
  // H200 figures; 32 query heads over 8 K/V heads, N 4096, d 128, causal and not: the
  // registry's sm_90 config (Br 64, Bc 128, 1 CTA an SM; K/V blocks fastest without a mask,
  // causal heads fastest in one group of all 8 K/V heads: 4 heads' 128 CTAs fall short of
  // 132), its repeats skipped exactly as every step simulated; fa1_bwd has no GQA, so no
  // simulation.
  const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};
  for (bool causal : {false, true}) {
    AttentionProblem p{1, 32, 4096, 128, causal, DType::fp16};
    p.kv_heads = 8;
    const auto point = l2_aware_dram(fa2_backward_kernel, p, h200);
    REQUIRE(point);
    LaunchGeometry geometry{
        {64, 128}, 1, 132, grid_order_for(fa2_backward_kernel.launches[1], causal)};
    if (causal) geometry.kv_heads_per_group = 8;
    CHECK(geometry.grid_order[0] == (causal ? GridAxis::heads : GridAxis::kv_blocks));
    CHECK(point->bytes() ==
          fa2_backward_dram(p, geometry, geometry, geometry, {62914560, 2}).bytes());
    const auto simulated = l2_aware_dram_simulated(fa2_backward_kernel, p, h200);
    REQUIRE(simulated);
    CHECK(simulated->bytes() == point->bytes());
    CHECK(simulated->retained_dirty_bytes == point->retained_dirty_bytes);
    CHECK_FALSE(l2_aware_dram(fa1_backward_kernel, p, h200));
    AttentionProblem longer = p;
    longer.kv_len = 8192;
    CHECK_FALSE(l2_aware_dram(fa2_backward_kernel, longer, h200));
  }
}

TEST_CASE("causal GQA: fa2_bwd's CTAs of a K/V head, streaming down, share its Q tiles in L2") {
  // H200 figures, fa2_bwd's sm_90 config: 32 query heads over 8 K/V heads, N 4096,
  // d 128, causal. The main launch's CTAs of a K/V head start together and walk
  // their group's Q tiles from the last Q block down in step, so the group's Q, dO,
  // LSE, D and accumulator rows come from DRAM about once: no more than the square
  // problem's (32 K/V heads, whose CTAs stream one head each), where walking up
  // (CTA 0 reading a tile 2G j steps after CTA j) read 12 times as much in the same
  // simulation.
  const LaunchGeometry geometry{{64, 128}, 1, 132, fa2_backward_kernel.launches[1].order};
  AttentionProblem gqa{1, 32, 4096, 128, true, DType::fp16};
  gqa.kv_heads = 8;
  const AttentionProblem square{1, 32, 4096, 128, true, DType::fp16};
  const auto main_reads = [&](const AttentionProblem& p) {
    return fa2_backward_dram(p, geometry, geometry, geometry, {62914560, 2}).launches[1].read_bytes;
  };
  // Once: K and V of 8 K/V heads; Q, dO (256 B a row), LSE, D and an accumulator row
  // (512 B) of every query head's 4096 rows.
  const double once = 2 * 8 * 4096 * 256.0 + 32 * 4096 * (2 * 256.0 + 8 + 512);
  CHECK(main_reads(gqa) >= once);
  CHECK(main_reads(gqa) <= main_reads(square));
  CHECK(main_reads(gqa) < 1.5 * once);
}
