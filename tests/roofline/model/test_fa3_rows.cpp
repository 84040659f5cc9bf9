// Pins fa3_wgmma's Q block height at d 64 (catalog revision 8,
// roofline/model/fa3_rows.hpp): the persistent CTAs' makespan, the estimate
// and the rule, the last on the shapes one H100 session timed at both heights
// (results/h100/fa3-br192-79518c2/) where the two differed by more than 3 %.

#include <catch2/catch.hpp>

#include <array>

#include "roofline/model/fa3_rows.hpp"
#include "roofline/model/kernel_catalog.hpp"

using namespace cfr;

namespace {

constexpr int h100_sms = 132;
constexpr TileShape config_tile{128, 128};

TileShape tile_of(std::int64_t batch, std::int64_t heads, std::int64_t n, bool causal,
                  int sm_count = h100_sms) {
  const AttentionProblem problem{batch, heads, n, 64, causal, DType::fp16};
  return fa3_wgmma_kernel.problem_tile(problem, config_tile, sm_count);
}

}  // namespace

TEST_CASE("persistent CTAs take the next tile when they finish one") {
  const std::array<double, 1> one{1.0};
  CHECK(persistent_makespan(one, 10, 4) == 3.0);  // rounds of 4, 4 and 2
  CHECK(persistent_makespan(one, 8, 4) == 2.0);
  // Heaviest first: 4 and 3 on two CTAs, then 2 after the 3, 1 after the 4.
  const std::array<double, 4> costs{4.0, 3.0, 2.0, 1.0};
  CHECK(persistent_makespan(costs, 1, 2) == 5.0);
  // Each cost `repeats` times in a row (the heads side by side).
  CHECK(persistent_makespan(costs, 2, 4) == 5.0);
  // Past 65536 tiles: the total over the CTAs.
  CHECK(persistent_makespan(one, 65537 * 3, 3) == Approx(65537.0));
  CHECK(persistent_makespan(one, 5, 0) == 0.0);
  // Equal tiles in whole rounds, as the list gives them.
  const std::array<double, 3> equal{2.5, 2.5, 2.5};
  CHECK(persistent_makespan(equal, 7, 4) == 6 * 2.5);
  // 14 tiles of 2.5 end at 10, 10, 7.5, 7.5; 7 of 2.4 then at 9.9, 9.9, 12.3, 12.3, 12.4,
  // 12.4 and 14.7.
  const std::array<double, 3> nearly{2.5, 2.5, 2.4};
  CHECK(persistent_makespan(nearly, 7, 4) == Approx(14.7));
}

TEST_CASE("the estimate: rounds of equal tiles without a mask, fixed cost and row time") {
  // B1 H8 N 16K d 64: revision 7's 128 x 192 tile, 86 blocks of 192 keys:
  // 1024 tiles of (129 + 4) in 8 rounds; 192 x 128: 688 of (128 + 4) x 1.5 x
  // 0.91 in 6 rounds.
  const AttentionProblem problem{1, 8, 16384, 64, false, DType::fp16};
  CHECK(fa3_wgmma_estimated_time(problem, {128, 192}, h100_sms) == Approx(8 * 133.0));
  CHECK(fa3_wgmma_estimated_time(problem, {192, 128}, h100_sms) ==
        Approx(6 * 132.0 * 1.5 * fa3_tall_row_time));
}

TEST_CASE("192-row Q blocks at d 64 where the timed shapes ran them more than 3 % faster") {
  // B1 H8 (issue 22's axes): 1.06-1.32x the time without a mask, 1.22x causal N 4K.
  for (const std::int64_t n : {4096, 8192, 16384}) {
    CAPTURE(n);
    CHECK(tile_of(1, 8, n, false).br == 128);
  }
  CHECK(tile_of(1, 8, 4096, true).br == 128);
  // B4 H16: 0.948x without a mask at N 8K, 0.90x and 0.91x causal at N 5000 and 8K.
  CHECK(tile_of(4, 16, 8192, false) == TileShape{192, 128});
  CHECK(tile_of(4, 16, 5000, true) == TileShape{192, 128});
  CHECK(tile_of(4, 16, 8192, true) == TileShape{192, 128});
}

TEST_CASE("revision 8 keeps revision 7's tile at d 128 and where the SMs are unknown") {
  const AttentionProblem d128{4, 16, 8192, 128, false, DType::fp16};
  CHECK(fa3_wgmma_kernel.problem_tile(d128, config_tile, h100_sms) ==
        fa3_wgmma_tile(d128, config_tile));
  CHECK(tile_of(4, 16, 8192, false, 0) ==
        fa3_wgmma_tile({4, 16, 8192, 64, false, DType::fp16}, config_tile));
  CHECK(fa3_wgmma_v7_kernel.problem_tile == fa3_wgmma_tile);
  // An edited report's heads cannot overflow the tile count or make the list run long.
  const std::array<double, 2> unequal{2.0, 1.0};
  CHECK(persistent_makespan(unequal, std::int64_t{1} << 62, 132) ==
        Approx(3.0 * static_cast<double>(std::int64_t{1} << 62) / 132));
  const AttentionProblem huge{
      std::int64_t{1} << 31, std::int64_t{1} << 31, 256, 64, true, DType::fp16};
  const TileShape picked = fa3_wgmma_kernel.problem_tile(huge, config_tile, h100_sms);
  CHECK((picked == TileShape{128, 128} || picked == TileShape{192, 128}));
  const AttentionProblem longest{1, 1, std::int64_t{1} << 28, 64, false, DType::fp16};
  CHECK(fa3_wgmma_kernel.problem_tile(longest, config_tile, h100_sms) ==
        fa3_wgmma_tile(longest, config_tile));
  CHECK(fa3_wgmma_kernel.revision == 8);
}
