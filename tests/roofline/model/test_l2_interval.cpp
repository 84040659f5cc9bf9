// Pins the L2-aware model's interval (l2_aware_interval, docs/model.md "The
// interval"): the point lies inside it; a launch that fits the L2 differs
// only in its retained writes; one past it widens both ways. The GPU is the
// profiled H200 (the device of results/h200/profile/default.json).

#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

L2ModelInputs profiled_h200() {
  const Report report = report_from_json(nlohmann::json::parse(
      cfr::test::read_source_text(CFR_SOURCE_ROOT "/results/h200/profile/default.json")));
  REQUIRE(!report.devices.empty());
  return l2_model_inputs(report.devices.front());
}

struct Bounds {
  DramEstimate point;
  DramInterval interval;
};

Bounds bounds_of(std::string_view kernel, const AttentionProblem& problem) {
  const L2ModelInputs h200 = profiled_h200();
  const auto point = l2_aware_dram(*find_kernel(kernel), problem, h200);
  const auto interval = l2_aware_interval(*find_kernel(kernel), problem, h200);
  REQUIRE(point);
  REQUIRE(interval);
  return {*point, *interval};
}

}  // namespace

TEST_CASE("a launch that fits the L2: low is the point, high adds the writes still in L2") {
  const Bounds b = bounds_of("fa2_mma", {1, 8, 4096, 64, false, DType::fp16});
  CHECK(b.interval.low == b.point.bytes());
  CHECK(b.interval.high == b.point.eventual_bytes());
  CHECK(b.point.retained_dirty_bytes > 0);  // O and LSE: 4.2 MB, still in L2
}

TEST_CASE("past the L2: drifted CTAs read more, lock-step with a whole L2 less") {
  // fa2_mma at H 32, N 8192, d 128: the K/V of the heads in flight (32 x 4 MiB)
  // exceed the 30 MiB a partition holds; CTAs of a head started apart miss.
  const Bounds wide = bounds_of("fa2_mma", {1, 32, 8192, 128, false, DType::fp16});
  CHECK(wide.interval.low <= wide.point.bytes());
  CHECK(wide.interval.high > 1.5 * wide.point.bytes());
  // fa1_scalar causal at H 8, N 16384, d 64: natural order lets a head's
  // CTAs drift apart; lock-step and 60 MiB keep more of its K/V.
  const Bounds causal = bounds_of("fa1_scalar", {1, 8, 16384, 64, true, DType::fp16});
  CHECK(causal.interval.low < 0.9 * causal.point.bytes());
  CHECK(causal.interval.high >= causal.point.eventual_bytes());
}

TEST_CASE("no interval where the model does not apply") {
  const L2ModelInputs h200 = profiled_h200();
  // A paged cache: only split_kv simulates one.
  AttentionProblem paged{1, 32, 16, 128, true, DType::fp16};
  paged.kv_len = 4096;
  paged.page_size = 16;
  CHECK_FALSE(l2_aware_interval(*find_kernel("fa2_mma"), paged, h200));
}
