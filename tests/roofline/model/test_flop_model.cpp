#include <catch2/catch.hpp>

#include "roofline/model/flop_model.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;

TEST_CASE("dense forward FLOPs are 4·B·H·N²·d: the seed's 549.8 G (§4.1, §5.1)") {
  const FlopCounts f = attention_flops(seed_shape(), Direction::forward, FlopConvention::exact);
  // 4 · 1 · 8 · 16384² · 64 = 549,755,813,888
  CHECK(f.dense == 549755813888.0);
  CHECK(f.exact == f.dense);
  CHECK(f.half == f.dense);
  CHECK(f.counted() / 1e9 == Approx(549.8).margin(0.05));
}

TEST_CASE("causal FLOPs: exact counts N(N+1)/2 pairs, half is dense / 2") {
  const FlopCounts exact =
      attention_flops(seed_shape(true), Direction::forward, FlopConvention::exact);
  // 4 · 8 · 64 · 16384 · 16385 / 2 = 274,894,684,160
  CHECK(exact.exact == 274894684160.0);
  CHECK(exact.half == 274877906944.0);
  CHECK(exact.counted() == exact.exact);
  const FlopCounts half =
      attention_flops(seed_shape(true), Direction::forward, FlopConvention::half);
  CHECK(half.counted() == half.half);
  CHECK(half.dense == 549755813888.0);
}

TEST_CASE("softmax FLOPs are 5 per counted pair, reported apart from the matmuls") {
  const FlopCounts f = attention_flops(seed_shape(), Direction::forward, FlopConvention::exact);
  CHECK(f.softmax == 5.0 * 8 * 16384.0 * 16384.0);
  const FlopCounts c = attention_flops(seed_shape(true), Direction::forward, FlopConvention::exact);
  CHECK(c.softmax == 5.0 * 8 * 16384.0 * 16385.0 / 2);
}

TEST_CASE("backward counts 2.5x the forward matmul FLOPs (FlashAttention convention)") {
  const FlopCounts f = attention_flops(seed_shape(), Direction::forward, FlopConvention::exact);
  const FlopCounts b = attention_flops(seed_shape(), Direction::backward, FlopConvention::exact);
  CHECK(b.dense == 2.5 * f.dense);
  CHECK(b.counted() == 2.5 * f.counted());
}

TEST_CASE("N = 1 causal has exactly one pair per head") {
  const AttentionProblem one{1, 1, 1, 32, true, DType::fp32};
  const FlopCounts f = attention_flops(one, Direction::forward, FlopConvention::exact);
  CHECK(f.exact == 4.0 * 32);
  CHECK(f.half == 2.0 * 32);
}

TEST_CASE("FLOP conventions parse by name and reject others") {
  CHECK(parse_flop_convention("exact") == FlopConvention::exact);
  CHECK(parse_flop_convention("half") == FlopConvention::half);
  CHECK_FALSE(parse_flop_convention("quarter"));
}
