#pragma once

// How our timer fared against Nsight Compute on a report's profiled rows
// (issue 23's target: the timing check within ±3 % on every profiled row of
// 50 µs or more). `audit` states it, and names each row outside with how far
// its own launches spread: a row whose profiled launches or process samples
// differ by more than the check's 3 % cannot be held to it by a median of
// three launches (docs/model.md §8.2).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "roofline/profile/profile_checks.hpp"
#include "roofline/report/report.hpp"

namespace cfr::evidence {

inline constexpr double timing_check_tolerance = 0.03;
inline constexpr double timing_check_min_ms = 0.05;

struct TimingMiss {
  std::size_t row = 0;  // index in the report's results
  TimingCheck check;
  std::optional<double> launch_spread;   // ncu's profiled launches
  std::optional<double> process_spread;  // the profiled process's samples
};

struct TimingCoverage {
  std::size_t rows = 0;    // profiled rows of timing_check_min_ms or more with a timing check
  std::size_t within = 0;  // |ratio - 1| <= timing_check_tolerance
  // Rows whose launches and process samples each spread within the
  // tolerance (or lack the record): there the check tests the timer alone.
  std::size_t steady = 0;
  std::size_t steady_within = 0;
  std::vector<TimingMiss> outside;
};

TimingCoverage timing_coverage(const Report& report);

// "timing check within ±3 % on 26 of 30 profiled rows of 50 µs or more, on 21
// of the 22 whose launches are steady"; empty when no row has a check.
std::string describe(const TimingCoverage& coverage);

// One row outside: "timing check 0.895 by process cycles; ncu's launches
// spread 9.7 %, the process's samples 0.3 %".
std::string describe(const TimingMiss& miss);

}  // namespace cfr::evidence
