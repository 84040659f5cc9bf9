#include "roofline/report/measured_row.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "roofline/core/sample_validity.hpp"
#include "roofline/core/statistics.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr {

Correctness correctness_record(std::string reference, DType io_dtype,
                               std::span<const CheckedTensor> checked,
                               std::optional<CheckSample> sample) {
  const Tolerance tolerance = tolerance_for(io_dtype);
  Correctness record;
  record.reference = std::move(reference);
  record.sample = sample;
  record.tolerance = tolerance.rel_l2;
  bool all_passed = !checked.empty();
  for (const CheckedTensor& tensor : checked) {
    TensorError error{tensor.tensor, tensor.check.rel_l2_err, tensor.check.max_abs_err};
    if (!tensor.check.all_finite) error.rel_l2_err = error.max_abs_err = non_finite_error;
    all_passed = all_passed && passes(tensor.check, tolerance);
    record.rel_l2_err = std::fmax(record.rel_l2_err, error.rel_l2_err);
    record.max_abs_err = std::fmax(record.max_abs_err, error.max_abs_err);
    record.tensors.push_back(std::move(error));
  }
  record.passed =
      all_passed && std::isfinite(record.rel_l2_err) && record.rel_l2_err <= record.tolerance;
  return record;
}

std::optional<std::string> correctness_failure(const Correctness& record) {
  if (record.passed) return std::nullopt;
  std::vector<std::string_view> non_finite;
  for (const TensorError& tensor : record.tensors) {
    if (tensor.rel_l2_err == non_finite_error) non_finite.push_back(tensor.tensor);
  }
  if (!non_finite.empty()) {
    return fmt::format("correctness: NaN or Inf in {}", fmt::join(non_finite, ", "));
  }
  if (record.tensors.empty()) return "correctness: no output tensor was checked";
  return fmt::format(
      "correctness: worst rel L2 error {:.3g}, max abs error {:.3g} (rel L2 tolerance {:.3g})",
      record.rel_l2_err, record.max_abs_err, record.tolerance);
}

void record_timing(ResultRow& row, std::optional<Timing> timing, const CeilingRecord& ceiling,
                   const std::optional<std::string>& profiler) {
  row.timing = std::move(timing);
  if (row.status == RowStatus::ok) {
    const auto why = unusable_samples_reason(
        row.timing ? row.timing->samples_ms : std::vector<double>{}, profiler);
    if (why) {
      row.status = RowStatus::failed;
      row.reason = *why;
      row.timing.reset();  // zeros are no samples; the reason says how many there were
    }
  }
  if (row.timing) {
    row.timing->summary = summarize(row.timing->samples_ms);
    row.achieved = achieved_figures(*row.model, row.timing->summary.median, ceiling);
  }
}

}  // namespace cfr
