#include <catch2/catch.hpp>

#include <stdexcept>

#include "roofline/profile/profile_checks.hpp"

using namespace cfr;

// Numbers below are tests/roofline/fixtures/ncu/l2data.csv as printed (row i is NVTX range
// cfr_row_<i>, configuration line i + 1 of l2data-configs.txt); ceilings are
// results/h200/ceilings.json (measured: DRAM 3935.5 GB/s copy kernel, L2 7143.2 GB/s,
// fp16 mma.sync 595.2 TFLOP/s) and configs/gpus.json (datasheet: 4800 GB/s, 989.4 TFLOP/s).

namespace {
// Row 100: fa2_mma fp16, B 1, H 32, N 32768, d 128, non-causal.
constexpr double row100_flops = 4.0 * 32 * 32768.0 * 32768.0 * 128;  // 1.759e13
constexpr double row100_dram = 1181519360.0 + 267608320.0;           // read + write
constexpr double row100_l2 = 137652903968.0;                         // lts__t_bytes.sum
constexpr double row100_seconds = 58355680e-9;                       // gpu__time_duration.sum
}  // namespace

TEST_CASE("AI and roof per level: row 100 sits far right of the DRAM ridge, left of none") {
  const LevelPoint dram = level_point("dram", row100_flops, row100_dram, 4800, 989.4);
  // 1.759e13 / 1.449e9 B = 12140 FLOP/B against a ridge of 989.4e12 / 4.8e12 = 206 FLOP/B.
  CHECK(dram.ai == Approx(12140.4).epsilon(1e-4));
  CHECK(dram.point.regime == Regime::compute_bound);
  const LevelPoint l2 = level_point("l2", row100_flops, row100_l2, 7143.2, 989.4);
  // 1.759e13 / 1.377e11 B = 127.8 FLOP/B: left of the L2 ridge 989.4 / 7.1432 = 138.5 FLOP/B,
  // so against L2 the kernel is (just) bandwidth-bound.
  CHECK(l2.ai == Approx(127.80).epsilon(1e-4));
  CHECK(l2.point.regime == Regime::memory_bound);
  CHECK(l2.point.roof_TFLOPs == Approx(7143.2e9 * 127.80 / 1e12).epsilon(1e-4));
  CHECK_THROWS_WITH(level_point("l2", row100_flops, 0, 7143.2, 989.4),
                    "l2 bytes must be positive, got 0");
}

TEST_CASE("the limiter is the resource nearest its own ceiling: row 100 is tensor-bound") {
  const Limiter limiter = find_limiter({{"dram", row100_dram, 3935.5e9},
                                        {"l2", row100_l2, 7143.2e9},
                                        {"fp16_tensor", row100_flops, 595.2e12}},
                                       row100_seconds);
  REQUIRE(limiter.utilizations.size() == 3);
  // DRAM 1.449e9 B / 58.36 ms = 24.8 GB/s: 0.6 % of 3935.5 GB/s.
  CHECK(limiter.utilizations[0].fraction == Approx(0.00631).epsilon(1e-2));
  // L2 1.377e11 B / 58.36 ms = 2359 GB/s: 33 % of 7143.2 GB/s.
  CHECK(limiter.utilizations[1].fraction == Approx(0.3302).epsilon(1e-3));
  // 1.759e13 FLOP / 58.36 ms = 301.5 TFLOP/s: 50.6 % of 595.2 TFLOP/s.
  CHECK(limiter.utilizations[2].fraction == Approx(0.5065).epsilon(1e-3));
  CHECK(limiter.name == "fp16_tensor");
  CHECK(limiter.fraction == limiter.utilizations[2].fraction);
  CHECK_THROWS_WITH(find_limiter({}, 1), "find_limiter: no resources");
  CHECK_THROWS_WITH(find_limiter({{"dram", 1, 1}}, 0), "time must be positive, got 0");
}

TEST_CASE("model error is model / measured - 1") {
  CHECK(model_error(125, 100) == Approx(0.25));
  CHECK(model_error(75, 100) == Approx(-0.25));
  CHECK_THROWS_WITH(model_error(1, 0), "measured value must be positive, got 0");
}

TEST_CASE("computed pairs of a causal tiling: the diagonal blocks' masked half counts") {
  // N = 1024, 32-row groups, 64-key blocks: groups 2k and 2k+1 both reach block k, so
  // 32 x 64 x 2 x (1 + ... + 16) = 557056 pairs for 1024 x 1025 / 2 = 524800 unmasked.
  CHECK(computed_pairs_per_head(1024, 32, 64, true) == 557056.0);
  // 16-row groups, 32-key blocks: 16 x 32 x 2 x (1 + ... + 32) = 540672.
  CHECK(computed_pairs_per_head(1024, 16, 32, true) == 540672.0);
  // Without a mask every row meets every (padded) block: 1000 rows x 16 x 64 keys.
  CHECK(computed_pairs_per_head(1000, 32, 64, false) == 1024000.0);
  CHECK_THROWS_AS(computed_pairs_per_head(1024, 0, 64, true), std::invalid_argument);
}

TEST_CASE("FLOP check on l2data: tensor ops match the tiling's computed pairs exactly") {
  // Row 61: fa2_mma fp16 H 8 N 1024 d 64 causal; warps of 32 rows skip masked 64-key blocks.
  // sm__ops_path_tensor_src_fp16.sum 1,140,850,688 = 8 x 557056 x 64 x 4.
  const FlopCheck fa2 = flop_check(1140850688.0, {1, 8, 1024, 64, true, DType::fp16}, 32, 64);
  CHECK(fa2.model == 4.0 * 8 * 524800 * 64);
  CHECK(fa2.ratio == Approx(1.0615).epsilon(1e-4));
  CHECK(fa2.expected_ratio == Approx(557056.0 / 524800.0));
  CHECK(fa2.residual == Approx(0).margin(1e-12));
  CHECK(fa2.masked_work ==
        "diagonal blocks: 32-row groups x 64-key blocks compute 557056 pairs per head for 524800 "
        "unmasked (1.0615x)");
  // Row 51: fa1_wmma fp16 H 8 N 1024 d 128 causal; 16-row warps, 32-key blocks: 2,214,592,512.
  const FlopCheck wmma = flop_check(2214592512.0, {1, 8, 1024, 128, true, DType::fp16}, 16, 32);
  CHECK(wmma.residual == Approx(0).margin(1e-12));
  // Row 21: fa1_scalar fp16 H 8 N 1024 d 64 causal, FFMA counted: 571,629,568 x 2 FLOP. The
  // whole 64-row CTA skips blocks; 0.2 % more FFMAs than the matmuls (the softmax's).
  const FlopCheck scalar =
      flop_check(571629568.0 * flops_per_ffma, {1, 8, 1024, 64, true, DType::fp16}, 64, 64);
  CHECK(scalar.expected_ratio == Approx(557056.0 / 524800.0));
  CHECK(scalar.residual == Approx(0.00211).epsilon(1e-2));
  // Row 1: naive causal: cuBLAS computes all of S and P V: 2 x 1,073,741,824 ops, 2N/(N+1).
  const FlopCheck naive = flop_check(2 * 1073741824.0, {1, 8, 1024, 64, true, DType::fp16}, 0, 0);
  CHECK(naive.ratio == Approx(2048.0 / 1025.0));
  CHECK(naive.residual == Approx(0).margin(1e-12));
}

TEST_CASE("timing ratio: our median over ncu's duration") {
  CHECK(timing_ratio(58.0e6, 58355680) == Approx(0.99390).epsilon(1e-4));
  CHECK_THROWS_WITH(timing_ratio(1, 0), "ncu duration must be positive, got 0");
}
