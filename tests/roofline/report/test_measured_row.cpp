// The measured half of a row (roofline/report/measured_row.hpp): the verdict
// on checked tensors by roofline/core/output_check.hpp's tolerances, and the
// timing's summary and achieved figures, for the sweep and the peers alike.
#include <catch2/catch.hpp>

#include "roofline/report/measured_row.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/a100_ceiling.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;

namespace {

CheckedTensor tensor(const char* name, double rel_l2, double max_abs, double ref_max_abs,
                     bool finite = true) {
  CheckResult check;
  check.rel_l2_err = rel_l2;
  check.max_abs_err = max_abs;
  check.ref_max_abs = ref_max_abs;
  check.all_finite = finite;
  return {name, check};
}

}  // namespace

TEST_CASE("correctness: every tensor within the dtype's bounds passes, the worst is recorded") {
  // fp16: rel L2 5e-3, max abs 2e-2 x max|ref| (output_check.hpp)
  const CheckedTensor checked[] = {tensor("O", 1e-3, 4e-3, 3.0), tensor("LSE", 2e-3, 1e-3, 9.0)};
  const Correctness record = correctness_record("the reference", DType::fp16, checked);
  CHECK(record.passed);
  CHECK(record.reference == "the reference");
  CHECK(record.tolerance == 5e-3);
  CHECK(record.rel_l2_err == 2e-3);   // LSE's
  CHECK(record.max_abs_err == 4e-3);  // O's
  REQUIRE(record.tensors.size() == 2);
  CHECK(record.tensors[1].tensor == "LSE");
  CHECK(record.tensors[1].rel_l2_err == 2e-3);
  CHECK_FALSE(correctness_failure(record));
}

TEST_CASE("correctness: a sub-sampled check keeps its sample; a full one has none") {
  const CheckedTensor checked[] = {tensor("O", 1e-3, 4e-3, 3.0)};
  CHECK_FALSE(correctness_record("r", DType::fp16, checked).sample);
  const Correctness sampled = correctness_record("r", DType::fp16, checked, CheckSample{5, 256, 0});
  CHECK(sampled.sample == CheckSample{5, 256, 0});
  CHECK(sampled.passed);
}

TEST_CASE("correctness: rel L2 over the bound, or max abs over its share of max|ref|, fails") {
  const CheckedTensor rel[] = {tensor("O", 6e-3, 1e-3, 3.0)};
  const Correctness over = correctness_record("r", DType::fp16, rel);
  CHECK_FALSE(over.passed);
  CHECK(correctness_failure(over) ==
        "correctness: worst rel L2 error 0.006, max abs error 0.001 (rel L2 tolerance 0.005)");
  // 0.07 > 2e-2 x 3 = 0.06 in fp16; within bf16's 8e-2 x 3 = 0.24 (and its 2e-2 rel L2)
  const CheckedTensor wide[] = {tensor("O", 1e-3, 0.07, 3.0)};
  CHECK_FALSE(correctness_record("r", DType::fp16, wide).passed);
  CHECK(correctness_record("r", DType::bf16, wide).passed);
  // a zero reference judges max abs absolutely (scale 1): 0.01 <= 2e-2
  const CheckedTensor zero[] = {tensor("dQ", 0.0, 0.01, 0.0)};
  CHECK(correctness_record("r", DType::fp16, zero).passed);
}

TEST_CASE("correctness: NaN or Inf in an output fails, recorded as the largest double") {
  const CheckedTensor checked[] = {tensor("O", 1e-4, 1e-4, 3.0, false),
                                   tensor("LSE", 1e-4, 1e-4, 3.0)};
  const Correctness record = correctness_record("r", DType::fp32, checked);
  CHECK_FALSE(record.passed);
  CHECK(record.tensors[0].rel_l2_err == non_finite_error);
  CHECK(record.tensors[0].max_abs_err == non_finite_error);
  CHECK(record.rel_l2_err == non_finite_error);  // a number JSON can hold, unlike inf
  CHECK(correctness_failure(record) == "correctness: NaN or Inf in O");
}

TEST_CASE("correctness: a record with no tensor checked does not pass") {
  const Correctness record = correctness_record("r", DType::fp16, {});
  CHECK_FALSE(record.passed);
  CHECK(correctness_failure(record) == "correctness: no output tensor was checked");
}

TEST_CASE("record_timing: samples summarized, achieved figures over the median") {
  ResultRow row = model_row(fa1_wmma_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  Timing timing;
  timing.samples_ms = {4.0, 2.0, 3.0};
  record_timing(row, timing, a100_ceiling(), std::nullopt);
  REQUIRE(row.timing);
  CHECK(row.status == RowStatus::ok);
  CHECK(row.timing->summary.median == 3.0);
  CHECK(row.timing->summary.count == 3);
  REQUIRE(row.achieved);
  CHECK(row.achieved->TFLOPs == Approx(row.model->flops.counted() / 3e-3 / 1e12));
}

TEST_CASE("record_timing: samples that cannot back a time fail the row and are dropped") {
  ResultRow row = model_row(fa1_wmma_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  Timing zeros;
  zeros.samples_ms = {0.0, 0.0};
  record_timing(row, zeros, a100_ceiling(), "CUDA_INJECTION64_PATH=/x.so");
  CHECK(row.status == RowStatus::failed);
  CHECK(row.reason ==
        "all 2 samples are 0 ms: timing under an external profiler (CUDA_INJECTION64_PATH=/x.so) "
        "is not a measurement");
  CHECK_FALSE(row.timing);
  CHECK_FALSE(row.achieved);

  ResultRow untimed =
      model_row(fa1_wmma_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  record_timing(untimed, std::nullopt, a100_ceiling(), std::nullopt);
  CHECK(untimed.status == RowStatus::failed);
  CHECK(untimed.reason == "no samples: the events around the launches measured nothing");
}
