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

TEST_CASE("the loop the L2 keeps whole bounds the high schedule's partition, and nothing else") {
  // fa1_wmma causal at H 4, N 131072, d 64: each head's K/V (32 MiB) just
  // past the 30 MiB partition, where the H200 read more than an LRU of the
  // whole partition does (docs/model.md, "The misses").
  const KernelDescription& kernel = *find_kernel("fa1_wmma");
  const AttentionProblem problem{1, 4, 131072, 64, true, DType::fp16};
  const L2ModelInputs whole = profiled_h200();
  L2ModelInputs kept = whole;
  kept.loop_kept_bytes = 24.0 * 1024 * 1024;
  kept.loop_kept_source = "test";
  const auto point = l2_aware_dram(kernel, problem, whole);
  const auto point_kept = l2_aware_dram(kernel, problem, kept);
  const auto interval = l2_aware_interval(kernel, problem, whole);
  const auto interval_kept = l2_aware_interval(kernel, problem, kept);
  REQUIRE((point && point_kept && interval && interval_kept));
  CHECK(point_kept->bytes() == point->bytes());
  CHECK(point_kept->eventual_bytes() == point->eventual_bytes());
  CHECK(interval_kept->low == interval->low);
  CHECK(interval_kept->high > 1.5 * interval->high);
  // Equal to the full simulation (the memo keys the high bound by the L2 it sees).
  CHECK(l2_aware_interval_simulated(kernel, problem, kept) == interval_kept);

  // A loop kept larger than the partition changes nothing.
  L2ModelInputs larger = whole;
  larger.loop_kept_bytes = 2 * whole.l2_bytes;
  CHECK(l2_aware_interval(kernel, problem, larger) == interval);

  // A launch that fits the kept loop still has the fitting launch's interval.
  const AttentionProblem small{1, 8, 4096, 64, false, DType::fp16};
  const auto fits = l2_aware_interval(*find_kernel("fa2_mma"), small, kept);
  const auto fits_point = l2_aware_dram(*find_kernel("fa2_mma"), small, kept);
  REQUIRE((fits && fits_point));
  CHECK(fits->low == fits_point->bytes());
  CHECK(fits->high == fits_point->eventual_bytes());
}

TEST_CASE("a launch between the loop kept whole and the partition is simulated, point inside") {
  // fa2_mma at H 13, N 4096, d 64: Q, K, V, O and LSE are 26.2 MiB, past a
  // 24 MiB loop kept whole but within the 30 MiB partition the point sees.
  const KernelDescription& kernel = *find_kernel("fa2_mma");
  const AttentionProblem problem{1, 13, 4096, 64, false, DType::fp16};
  L2ModelInputs kept = profiled_h200();
  kept.loop_kept_bytes = 24.0 * 1024 * 1024;
  kept.loop_kept_source = "test";
  const auto point = l2_aware_dram(kernel, problem, kept);
  const auto interval = l2_aware_interval(kernel, problem, kept);
  REQUIRE((point && interval));
  CHECK(point->eventual_bytes() > kept.loop_kept_bytes);
  CHECK(point->eventual_bytes() <= kept.l2_bytes / kept.l2_partitions);
  CHECK(interval->low <= point->bytes());
  CHECK(interval->high >= point->eventual_bytes());
  CHECK(l2_aware_interval_simulated(kernel, problem, kept) == interval);
}
