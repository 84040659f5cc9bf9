#include <catch2/catch.hpp>

#include "roofline/core/problem_limits.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/row_model.hpp"

using namespace cfr;

TEST_CASE("problem limits: each dimension in 1..2^31 - 1, the fp32 tensor's bytes in 64 bits") {
  CHECK_FALSE(problem_out_of_range({1, 8, 16384, 64, false, DType::fp16}));
  CHECK(*problem_out_of_range({0, 8, 1024, 64, false, DType::fp16}) ==
        "batch = 0 is outside 1..2147483647");
  CHECK(*problem_out_of_range({1, 8, std::int64_t{1} << 31, 64, false, DType::fp16}) ==
        "seq_len = 2147483648 is outside 1..2147483647");
  // 2^31-1 each: B·H·N·d·4 is about 2^126.
  const std::int64_t big = 2147483647;
  CHECK(problem_out_of_range({big, big, big, big, false, DType::fp16})
            ->ends_with("overflows 64 bits"));
  // 2^20 · 2^20 · 2^20 · 2 · 4 = 2^63: one past int64.
  const std::int64_t m = std::int64_t{1} << 20;
  CHECK(problem_out_of_range({m, m, m, 2, false, DType::fp16}));
  CHECK_FALSE(problem_out_of_range({m, m, m, 1, false, DType::fp16}));
}

TEST_CASE("model_row skips a problem outside the limits with the reason, never wraps") {
  // Issue 12: batch × heads = 2^32 · 2^32 wrapped to 0 and gave an ok row of zero figures.
  const CeilingRecord ceiling{};
  const std::int64_t wraps = std::int64_t{1} << 32;
  const ResultRow row = model_row(fa1_wmma_kernel, {wraps, wraps, 1024, 64, true, DType::fp16},
                                  ceiling, FlopConvention::exact);
  CHECK(row.status == RowStatus::skipped);
  CHECK(row.reason == "batch = 4294967296 is outside 1..2147483647");
  CHECK_FALSE(row.model);
}
