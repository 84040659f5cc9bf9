// The `plugin` traffic model (roofline/model/own_byte_count.hpp, row_model.hpp): a
// kernel's own HBM byte count is checked, becomes the row's traffic.bytes and
// DRAM bytes, and the AI and the roof follow from it. The counts are made up
// here; the figures follow from them, the seed shape's FLOPs and the A100
// datasheet ceiling below (docs/model.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "roofline/model/own_byte_count.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/a100_ceiling.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;

namespace {

// Answers the same for every problem.
class FixedCount final : public OwnByteCount {
 public:
  explicit FixedCount(ByteCount answer) : answer_(std::move(answer)) {}
  ByteCount hbm_bytes(const AttentionProblem&) const override { return answer_; }

 private:
  ByteCount answer_;
};

// fa1_scalar's dtypes, head dims and tiles, counting its own bytes: a name
// the catalog does not know, so no launch layout (the L2-aware model cannot
// apply).
KernelDescription counting(const OwnByteCount& count) {
  KernelDescription kernel = fa1_scalar_kernel;
  kernel.name = "own_count";
  kernel.launches = {};
  kernel.traffic = TrafficModelKind::plugin;
  kernel.own_bytes = &count;
  return kernel;
}

}  // namespace

TEST_CASE("a kernel's own byte count is the row's traffic and DRAM bytes") {
  const FixedCount count(1e12);
  // With the L2 figures of a GPU: the L2-aware model still does not apply.
  const L2ModelInputs l2{50.0 * 1024 * 1024, 2, 108, {8, 0}, "test"};
  const ResultRow row = model_row(counting(count), seed_shape(), a100_ceiling(),
                                  FlopConvention::exact, ComputeCapability{8, 0}, l2);
  REQUIRE(row.status == RowStatus::ok);
  const ModelFigures& model = *row.model;
  CHECK(model.traffic.model == TrafficModelKind::plugin);
  CHECK(model.traffic.bytes == 1e12);
  CHECK(model.traffic.breakdown.empty());  // a total: the kernel gives no tensors
  // Q, K, V read and O written once: 4 · 8 heads · 16384 · 64 · 2 B.
  CHECK(model.traffic.compulsory_bytes == 67108864.0);
  CHECK(model.bytes_of(TrafficModelKind::compulsory) == 67108864.0);
  CHECK(model.bytes_of(TrafficModelKind::plugin) == 1e12);
  CHECK_FALSE(model.bytes_of(TrafficModelKind::l2_aware).has_value());
  CHECK(model.dram_model == TrafficModelKind::plugin);
  CHECK_FALSE(model.l2_inputs.has_value());
  // 4 · 8 · 16384² · 64 = 549755813888 FLOPs over 1e12 B; fp16 on SIMT: the
  // 19.5 TFLOP/s peak, ridge 19.5e12 / 2039e9 = 9.56, so memory bound with a
  // roof of 2039 GB/s × AI.
  CHECK(model.ai == Approx(0.549755813888));
  CHECK(model.roofline->regime == Regime::memory_bound);
  CHECK(model.roofline->roof_TFLOPs == Approx(2039e9 * 0.549755813888 / 1e12));
  CHECK(achieved_figures(model, 1000.0, a100_ceiling()).bandwidth_GBps == Approx(1000.0));

  // What audit starts from without the plugin: the row's own bytes as recorded.
  const KernelRecord record = kernel_record(row);
  CHECK(record.traffic == TrafficModelKind::plugin);
  CHECK(record.own_bytes == 1e12);
}

TEST_CASE("a byte count that is no count fails the row with one line naming the kernel") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::pair<ByteCount, const char*> answers[] = {
      {nan, "own_count: its HBM byte count for this shape, nan B is not a byte count"},
      {inf, "own_count: its HBM byte count for this shape, inf B is not a byte count"},
      {-4096.0, "own_count: its HBM byte count for this shape, -4096 B is not a byte count"},
      {0.0, "own_count: its HBM byte count for this shape, 0 B is not a byte count"},
      {std::string("no N=16384 here"),
       "own_count: no HBM byte count for this shape: no N=16384 here"},
  };
  for (const auto& [answer, words] : answers) {
    INFO(words);
    const FixedCount count(answer);
    const ResultRow row =
        model_row(counting(count), seed_shape(), a100_ceiling(), FlopConvention::exact);
    CHECK(row.status == RowStatus::failed);
    CHECK(row.reason.find(words) == 0);
    CHECK(row.reason.find('\n') == std::string::npos);
    CHECK_FALSE(row.model.has_value());
  }
  CHECK_FALSE(byte_count_problem(1.0).has_value());
  CHECK(byte_count_problem(-0.0).has_value());
  // Positive but under a byte: its intensity would be infinite (1e-300 B gave an `ok` row
  // whose own audit recomputed an AI of inf).
  CHECK(byte_count_problem(1e-300).has_value());
  CHECK(byte_count_problem(0.5).has_value());
}

TEST_CASE("only the kernel can count `plugin` bytes: the tool's models refuse to") {
  CHECK_THROWS_AS(
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::plugin, {64, 64}),
      std::invalid_argument);
  KernelRecord record = kernel_record(fa1_scalar_kernel, seed_shape());
  record.traffic = TrafficModelKind::plugin;  // and no own_bytes
  CHECK_THROWS_AS(model_figures(record, seed_shape(), a100_ceiling(), FlopConvention::exact),
                  std::invalid_argument);
}

TEST_CASE("a description counts its own bytes with the plugin model, and only then") {
  const FixedCount count(1.0);
  KernelDescription kernel = counting(count);
  CHECK_FALSE(description_error(kernel));
  kernel.direction = Direction::backward;  // either direction
  kernel.forward_partner = "fa1_scalar";
  CHECK_FALSE(description_error(kernel));

  const std::string_view rule =
      "gives its own byte count without the plugin traffic model, or the reverse";
  kernel = counting(count);
  kernel.own_bytes = nullptr;
  CHECK(description_error(kernel).problem == rule);
  kernel = counting(count);
  kernel.traffic = TrafficModelKind::kv_reload;
  CHECK(description_error(kernel).problem == rule);
}
