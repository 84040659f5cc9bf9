// Checks that scale (issue 19), on a GPU. A row whose reference would spend
// more than the check budget is checked on a sample of rows, stated in its
// record (docs/checks.md): measured here through bench::DeviceSession with a
// small budget, forward, backward and GQA with Nq != Nk. The [scale] cases,
// hidden from a plain run (`test_bench_gpu "[scale]"`), time the check
// stages of the rows on the H200 (each under 60 s, checked in full)
// and the tiled references' rates against the rate the budget assumes.
#include <chrono>
#include <string>
#include <tuple>
#include <variant>

#include <catch2/catch.hpp>

#include "bench_rows.hpp"
#include "kernels/bench/row_stages.hpp"
#include "kernels/measure/device_info.hpp"
#include "kernels/tiled_reference.hpp"
#include "roofline/model/check_sample.hpp"

namespace cfr::kernels {
namespace {

using testing::kernel;
using testing::quick;

bench::BenchResult run_row(std::string_view name, const AttentionProblem& p,
                           double check_budget_flops) {
  bench::DeviceSession session(0);
  bench::BenchSettings settings = quick();
  settings.check_budget_flops = check_budget_flops;
  const bench::BenchResult result = session.run(kernel(name), p, settings);
  INFO(name << ": " << result.reason);
  CHECK(result.status == RowStatus::ok);
  REQUIRE(result.correctness.has_value());
  CHECK(result.correctness->passed);
  return result;
}

TEST_CASE("a row over the check budget is checked on a sample of rows, stated in its record",
          "[bench][sampled]") {
  const AttentionProblem forward{1, 4, 4096, 64, true, DType::fp16};
  // Under the default budget the row is small: every row is checked.
  CHECK_FALSE(run_row("fa2_mma", forward, default_check_budget_flops).correctness->sample);
  // 1 MFLOP: the least sample, min_sampled_rows a head, drawn with the row's seed.
  const auto sampled = run_row("fa2_mma", forward, 1e6).correctness;
  REQUIRE(sampled->sample);
  CHECK(sampled->sample->query_rows == min_sampled_rows);
  CHECK(sampled->sample->key_rows == 0);
  CHECK(sampled->sample->seed == bench::problem_seed(quick().seed, forward));
  CHECK(sampled->tensors.size() == 2);

  // GQA with Nq < Nk and the bottom-right mask: the sample's rows gathered
  // over 8 query heads.
  AttentionProblem gqa{2, 8, 1000, 128, true, DType::bf16};
  gqa.kv_heads = 2;
  gqa.kv_len = 3000;
  const auto gqa_sampled = run_row("fa2_mma", gqa, 1e6).correctness;
  REQUIRE(gqa_sampled->sample);
  CHECK(gqa_sampled->sample->query_rows == min_sampled_rows);

  // Backward: dQ on sampled query rows, dK and dV on sampled key rows.
  const AttentionProblem backward{1, 2, 2048, 64, true, DType::fp16};
  const auto backward_sampled = run_row("fa1_bwd", backward, 1e6).correctness;
  REQUIRE(backward_sampled->sample);
  CHECK(backward_sampled->sample->query_rows == min_sampled_rows);
  CHECK(backward_sampled->sample->key_rows == min_sampled_rows);
  CHECK(backward_sampled->tensors.size() == 3);
}

// The check stage of one row, as DeviceSession::run does it: the inputs and
// references, the row's launches on poisoned outputs, the comparison.
struct TimedCheck {
  Correctness record;
  double seconds = 0;
};

TimedCheck time_check(std::string_view name, const AttentionProblem& p) {
  const auto resolved = bench::resolve_row(kernel(name), measure::compute_capability_of(0));
  REQUIRE(std::holds_alternative<bench::RowLaunchers>(resolved));
  const auto& launchers = std::get<bench::RowLaunchers>(resolved);
  measure::CudaStream stream;
  const auto start = std::chrono::steady_clock::now();
  bench::ProblemData data;
  data.problem = p;
  data.seed = bench::problem_seed(quick().seed, p);
  data.backward = launchers.backward != nullptr;
  bench::prepare_inputs(data, stream);
  std::string message;
  bench::RowBuffers buffers = bench::allocate_row(launchers, data, stream, nullptr, &message);
  TimedCheck out{bench::check_row(launchers, buffers, data, stream), 0};
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void expect_checked_in_full_within_a_minute(std::string_view name, const AttentionProblem& p) {
  const TimedCheck check = time_check(name, p);
  INFO(name << " N" << p.seq_len << ": check " << check.seconds << " s, worst rel L2 "
            << check.record.rel_l2_err << ", reference " << check.record.reference);
  WARN(name << " N" << p.seq_len << " check: " << check.seconds << " s");
  CHECK(check.record.passed);
  CHECK_FALSE(check.record.sample);
  CHECK(check.seconds < 60);
}

TEST_CASE("the forward rows' checks at B1 H4 N131072 and N262144 d64 take under 60 s",
          "[.][scale]") {
  for (std::int64_t n : {131072, 262144}) {
    expect_checked_in_full_within_a_minute("fa2_mma", {1, 4, n, 64, false, DType::fp16});
  }
}

TEST_CASE("the backward row's check at B1 H4 N131072 d64 takes under 60 s", "[.][scale]") {
  expect_checked_in_full_within_a_minute("fa1_bwd", {1, 4, 131072, 64, false, DType::fp16});
}

// The rate check_sample.hpp's budget assumes, measured: a slower reference
// would plan checks that run past their budget.
TEST_CASE("the tiled references reach the rate the check budget assumes", "[.][scale]") {
  measure::CudaStream stream;
  bench::ProblemData data;
  data.problem = {1, 4, 131072, 64, false, DType::fp16};
  data.seed = 5;
  data.backward = true;
  bench::fill_inputs(data, stream);
  const AttentionShape shape = shape_of(data.problem);
  const bench::TensorSizes n = bench::tensor_sizes(data.problem);
  measure::DeviceBuffer o(n.q * 4), lse(n.lse * 4), d_q(n.q * 4), d_k(n.kv * 4), d_v(n.kv * 4);
  const auto seconds = [&](auto&& run) {
    const auto start = std::chrono::steady_clock::now();
    CFR_CUDA_CHECK(run());
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const double forward = seconds([&] {
    return tiled_reference_forward(shape, data.q.data(), data.k.data(), data.v.data(),
                                   o.as<float>(), lse.as<float>(), {}, stream);
  });
  const double backward = seconds([&] {
    return tiled_reference_backward(shape, data.q.data(), data.k.data(), data.v.data(),
                                    data.d_o.data(), d_q.as<float>(), d_k.as<float>(),
                                    d_v.as<float>(), {}, {}, stream);
  });
  const double forward_rate = reference_flops(data.problem, Direction::forward) / forward;
  const double backward_rate = reference_flops(data.problem, Direction::backward) / backward;
  WARN("tiled_reference_forward: " << forward << " s, " << forward_rate / 1e12
                                   << " TFLOP/s; tiled_reference_backward: " << backward << " s, "
                                   << backward_rate / 1e12 << " TFLOP/s");
  CHECK(forward_rate >= assumed_reference_flops_per_s);
  CHECK(backward_rate >= assumed_reference_flops_per_s);
}

// The long sums the small shapes of test_tiled_reference.cpp never reach:
// head 0 of the tiled forward at N131072 against the obvious reference run
// on that head alone (its Q, K, V are the tensors' first rows). fp32 sums
// over 131072 keys: about 1e-5 relative expected, 1e-4 allowed.
TEST_CASE("the tiled forward matches the obvious one over 131072 keys", "[.][scale]") {
  measure::CudaStream stream;
  bench::ProblemData data;
  data.problem = {1, 4, 131072, 64, true, DType::fp16};
  data.seed = 6;
  bench::fill_inputs(data, stream);
  const AttentionShape shape = shape_of(data.problem);
  const bench::TensorSizes n = bench::tensor_sizes(data.problem);
  measure::DeviceBuffer o(n.q * 4), lse(n.lse * 4);
  CFR_CUDA_CHECK(tiled_reference_forward(shape, data.q.data(), data.k.data(), data.v.data(),
                                         o.as<float>(), lse.as<float>(), {}, stream));
  AttentionShape head = shape;
  head.heads = 1;
  head.kv_heads = 1;
  const std::size_t rows = 131072;
  measure::DeviceBuffer obvious_o(rows * 64 * 4), obvious_lse(rows * 4);
  CFR_CUDA_CHECK(reference_forward(head, data.q.data(), data.k.data(), data.v.data(),
                                   obvious_o.as<float>(), obvious_lse.as<float>(), stream));
  for (auto [name, got, want, count] :
       {std::tuple{"O", &o, &obvious_o, rows * 64}, std::tuple{"LSE", &lse, &obvious_lse, rows}}) {
    CheckResult result;
    CFR_CUDA_CHECK(
        compare_with_reference(got->data(), DType::fp32, want->as<float>(), count, stream, result));
    INFO(name << ": rel_l2_err " << result.rel_l2_err << ", max_abs_err " << result.max_abs_err);
    WARN(name << " at N131072: rel L2 " << result.rel_l2_err);
    CHECK(result.all_finite);
    CHECK(result.rel_l2_err <= 1e-4);
  }
}

}  // namespace
}  // namespace cfr::kernels
