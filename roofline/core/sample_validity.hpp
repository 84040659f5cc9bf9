#pragma once

// Whether a row's raw samples can back a time. Under an external profiler
// (ncu, nsys) the events around each launch read 0 ms, and a sweep run there
// wrote ok rows with median 0; such a row is never ok with a time.

#include <optional>
#include <string>
#include <vector>

namespace cfr {

// Why the samples cannot back a time (none, or none above 0 ms), naming the
// external profiler when `profiler` says one is attached; empty when they can.
std::optional<std::string> unusable_samples_reason(const std::vector<double>& samples_ms,
                                                   const std::optional<std::string>& profiler);

// The external profiler named by the environment's entries ("NAME=value"):
// the injection library that ncu and nsys load (CUDA_INJECTION64_PATH), or
// an NSYS_ / NV_NSIGHT_ variable. Empty when none is set.
std::optional<std::string> external_profiler(const std::vector<std::string>& environment);

}  // namespace cfr
