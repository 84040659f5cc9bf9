#include "roofline/evidence/interval_coverage.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cfr::evidence {

bool inside(const DramInterval& interval, double measured) {
  return interval.low <= measured && measured <= interval.high;
}

bool point_within_25_percent(double point, double measured) {
  return std::abs(point / measured - 1) <= 0.25;
}

IntervalCoverage interval_coverage(const Report& report) {
  IntervalCoverage coverage;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (!row.model || !row.model->dram_interval || !row.profile || !row.profile->collected()) {
      continue;
    }
    const auto& measured = row.profile->derived.dram.bytes;
    if (!measured || *measured <= 0) continue;
    const DramInterval& interval = *row.model->dram_interval;
    ++coverage.rows;
    if (inside(interval, *measured)) {
      ++coverage.inside;
    } else {
      coverage.outside.push_back({i, *measured, interval});
    }
    if (point_within_25_percent(row.model->dram_bytes(), *measured)) ++coverage.point_within_25;
  }
  return coverage;
}

std::string describe(const IntervalCoverage& coverage) {
  if (coverage.rows == 0) return {};
  return fmt::format(
      "ncu DRAM bytes inside the L2-aware interval on {} of {} profiled rows, the point "
      "within ±25 % on {}",
      coverage.inside, coverage.rows, coverage.point_within_25);
}

}  // namespace cfr::evidence
