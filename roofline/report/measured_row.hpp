#pragma once

// The measured half of a row, as `sweep` records its kernels and
// `import-samples` a peer's (docs/peers.md): the correctness record from the
// checked output tensors, and the timing's summary and achieved figures. One
// place, so a peer's row is judged exactly as ours.

#include <limits>
#include <optional>
#include <span>
#include <string>

#include "roofline/core/output_check.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

struct CheckedTensor {
  std::string tensor;  // "O", "LSE", "dQ", ...
  CheckResult check;
};

// The errors recorded for a tensor with NaN or Inf elements: JSON has no
// infinity (nlohmann writes null, which no reader of a report accepts).
inline constexpr double non_finite_error = std::numeric_limits<double>::max();

// The row's record of `checked`, the output tensors of a problem of
// `io_dtype`: each tensor's errors, the worst of them, the dtype's rel L2
// tolerance (tolerance_for: LSE too, stored in fp32 but computed from scores
// of that dtype), and passed when every tensor passes and the worst rel L2
// error is within the tolerance. `sample` names the rows compared when not
// every row was (a sub-sampled check).
Correctness correctness_record(std::string reference, DType io_dtype,
                               std::span<const CheckedTensor> checked,
                               std::optional<CheckSample> sample = std::nullopt);

// Why a row whose record did not pass failed, in one line; empty when it passed.
std::optional<std::string> correctness_failure(const Correctness& record);

// Records a timed row's samples, summarized, with the achieved figures
// against `ceiling` (the row's model must be present). An ok row whose
// samples cannot back a time (unusable_samples_reason: none, or none above
// 0 ms, naming `profiler` when one is attached) fails with that reason and
// keeps no timing.
void record_timing(ResultRow& row, std::optional<Timing> timing, const CeilingRecord& ceiling,
                   const std::optional<std::string>& profiler);

}  // namespace cfr
