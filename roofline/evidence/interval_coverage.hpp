#pragma once

// How the L2-aware model's DRAM bytes fared against Nsight Compute on a
// report's profiled rows (issue 23's targets: the measured bytes inside the
// interval, the point within ±25 %). `audit` states it; the miss-class docs
// count with it.

#include <cstddef>
#include <string>
#include <vector>

#include "roofline/report/report.hpp"

namespace cfr::evidence {

// The rules the targets count by: the measured bytes inside [low, high], and
// the point within ±25 % of them.
bool inside(const DramInterval& interval, double measured);
bool point_within_25_percent(double point, double measured);

struct IntervalMiss {
  std::size_t row = 0;  // index in the report's results
  double measured = 0;  // ncu DRAM bytes (read + write)
  DramInterval interval;
};

struct IntervalCoverage {
  std::size_t rows = 0;             // profiled rows with ncu DRAM bytes and an interval
  std::size_t inside = 0;           // low <= measured <= high
  std::size_t point_within_25 = 0;  // |point / measured - 1| <= 0.25
  std::vector<IntervalMiss> outside;
};

IntervalCoverage interval_coverage(const Report& report);

// "ncu DRAM bytes inside the L2-aware interval on 30 of 32 profiled rows, the
// point within ±25 % on 29"; empty when no row has both.
std::string describe(const IntervalCoverage& coverage);

}  // namespace cfr::evidence
