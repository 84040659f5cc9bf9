#include <catch2/catch.hpp>

#include "roofline/model/gpu_table.hpp"
#include "roofline/model/roofline_model.hpp"

using namespace cfr;

TEST_CASE("ridge = peak / bandwidth: the seed's 34.9, 153 and 295 (§2)") {
  // Any positive flops/bytes: the ridge depends on the ceilings only.
  CHECK(analyze_roofline(1, 1, 31.4, 900).ridge == Approx(34.9).margin(0.05));
  CHECK(analyze_roofline(1, 1, 312, 2039).ridge == Approx(153.0).margin(0.05));
  CHECK(analyze_roofline(1, 1, 989, 3350).ridge == Approx(295.2).margin(0.05));
}

TEST_CASE("ridge() is the one ridge: the roofline analysis and the GPU table use it") {
  // H200 datasheet: 989.4 TFLOP/s fp16 tensor over 4800 GB/s = 206.125 FLOP/byte.
  CHECK(ridge(989.4, 4800) == Approx(206.125));
  CHECK(analyze_roofline(1, 1, 989.4, 4800).ridge == ridge(989.4, 4800));
  GpuSpec h200;
  h200.memory_bandwidth_GBps = {4800, "datasheet"};
  h200.peak_TFLOPs[static_cast<std::size_t>(ComputeUnit::fp16_tensor)] = SourcedFigure{989.4, ""};
  CHECK(h200.ridge(ComputeUnit::fp16_tensor) == ridge(989.4, 4800));
  CHECK_FALSE(h200.ridge(ComputeUnit::bf16_tensor).has_value());
}

TEST_CASE("kv_reload seed shape has AI ≈ 64 on A100: memory-bound, 2.4x left of the ridge") {
  // 549,755,813,888 FLOP over 8,624,013,312 B (test_traffic_model.cpp).
  const RooflinePoint p = analyze_roofline(549755813888.0, 8624013312.0, 312, 2039);
  CHECK(p.regime == Regime::memory_bound);
  CHECK(p.ridge_distance == Approx(153.016 / 63.747).epsilon(1e-4));
  // Roof: 2039 GB/s · 63.747 FLOP/B = 129.98 TFLOPS; time = bytes / BW = 4.2296 ms.
  CHECK(p.roof_TFLOPs == Approx(129.98).margin(0.01));
  CHECK(p.roof_time_ms == Approx(4.2296).margin(0.0001));
}

TEST_CASE("right of the ridge the roof is the peak and the time is FLOPs / peak") {
  const RooflinePoint p = analyze_roofline(1e12, 1e9, 100, 1000);  // AI 1000, ridge 100
  CHECK(p.regime == Regime::compute_bound);
  CHECK(p.roof_TFLOPs == Approx(100));
  CHECK(p.roof_time_ms == Approx(10));
  CHECK(p.ridge_distance == Approx(0.1));
}

TEST_CASE("an AI interval is a regime only when it lies on one side of the ridge") {
  CHECK(judge_interval(10, 20, 30) == IntervalRegime::memory_bound);
  CHECK(judge_interval(10, 30, 30) == IntervalRegime::uncertain);  // its high end is compute-bound
  CHECK(judge_interval(30, 40, 30) == IntervalRegime::compute_bound);
  CHECK(judge_interval(29.9, 30.1, 30) == IntervalRegime::uncertain);
  for (IntervalRegime v :
       {IntervalRegime::memory_bound, IntervalRegime::compute_bound, IntervalRegime::uncertain}) {
    CHECK(parse_interval_regime(to_string(v)) == v);
  }
  CHECK(to_string(IntervalRegime::memory_bound) == to_string(Regime::memory_bound));
  CHECK_FALSE(parse_interval_regime("unsure"));
}
