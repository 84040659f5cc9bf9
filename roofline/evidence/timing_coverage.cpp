#include "roofline/evidence/timing_coverage.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cfr::evidence {

TimingCoverage timing_coverage(const Report& report) {
  TimingCoverage coverage;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (!row.profile || !row.profile->collected() || !row.timing) continue;
    if (row.timing->summary.median < timing_check_min_ms) continue;
    const ProfileDerived& d = row.profile->derived;
    const auto check = timing_check(d.process_cycle_ratio, d.cycle_ratio, d.timing_ratio);
    if (!check) continue;
    ++coverage.rows;
    const std::optional<double> launches =
        row.profile->launches ? launch_spread(*row.profile->launches) : std::nullopt;
    const std::optional<double> samples =
        row.profile->process_timing ? process_spread(*row.profile->process_timing) : std::nullopt;
    const bool within = std::abs(check->ratio - 1) <= timing_check_tolerance;
    const bool steady = launches.value_or(0) <= timing_check_tolerance &&
                        samples.value_or(0) <= timing_check_tolerance;
    coverage.within += within ? 1 : 0;
    coverage.steady += steady ? 1 : 0;
    coverage.steady_within += steady && within ? 1 : 0;
    if (!within) coverage.outside.push_back({i, *check, launches, samples});
  }
  return coverage;
}

std::string describe(const TimingCoverage& coverage) {
  if (coverage.rows == 0) return {};
  return fmt::format(
      "timing check within ±{:.0f} % on {} of {} profiled rows of {:.0f} µs or more, on {} of "
      "the {} whose launches are steady",
      100 * timing_check_tolerance, coverage.within, coverage.rows, 1e3 * timing_check_min_ms,
      coverage.steady_within, coverage.steady);
}

std::string describe(const TimingMiss& miss) {
  const auto percent = [](std::optional<double> spread) {
    return spread ? fmt::format("{:.1f} %", 100 * *spread) : std::string("unrecorded");
  };
  return fmt::format(
      "timing check {:.3f} by {}, outside ±{:.0f} %; ncu's launches spread {}, the profiled "
      "process's samples {}",
      miss.check.ratio, miss.check.basis, 100 * timing_check_tolerance, percent(miss.launch_spread),
      percent(miss.process_spread));
}

}  // namespace cfr::evidence
