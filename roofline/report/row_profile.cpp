#include "roofline/report/row_profile.hpp"

#include <algorithm>
#include <vector>

#include "roofline/core/statistics.hpp"

namespace cfr {

namespace {

// Every value, or empty when one is missing.
std::optional<std::vector<double>> all_present(const std::vector<std::optional<double>>& values) {
  std::vector<double> present;
  for (const std::optional<double>& value : values) {
    if (!value) return std::nullopt;
    present.push_back(*value);
  }
  return present;
}

// (largest - smallest) / reference; empty for fewer than two values or a
// reference that is not positive.
std::optional<double> relative_range(const std::vector<double>& values, double reference) {
  if (values.size() < 2 || !(reference > 0)) return std::nullopt;
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  return (*high - *low) / reference;
}

}  // namespace

std::optional<std::vector<double>> every_launch_value(const ProfileLaunches& launches) {
  return all_present(launches.values);
}

std::optional<double> launch_spread(const ProfileLaunches& launches) {
  if (launches.recorded >= launches.values.size()) return std::nullopt;
  const auto values = every_launch_value(launches);
  if (!values) return std::nullopt;
  return relative_range(*values, (*values)[launches.recorded]);
}

std::optional<double> timer_floor_ms(const TimerFloor& floor) {
  if (floor.events.samples_ms.empty()) return std::nullopt;
  const auto profiled_ns = all_present(floor.ncu_ns);
  if (!profiled_ns || profiled_ns->empty()) return std::nullopt;
  return summarize(floor.events.samples_ms).median - summarize(*profiled_ns).median * 1e-6;
}

std::optional<double> process_spread(const ProcessTiming& timing) {
  if (timing.samples_ms.size() < 2) return std::nullopt;
  return relative_range(timing.samples_ms, summarize(timing.samples_ms).median);
}

const ProfileCounter* Profile::counter(std::string_view metric) const {
  for (const ProfileCounter& c : counters) {
    if (c.metric == metric) return &c;
  }
  return nullptr;
}

std::optional<double> Profile::value(std::string_view metric) const {
  const ProfileCounter* c = counter(metric);
  return c != nullptr ? c->value : std::nullopt;
}

}  // namespace cfr
