#include "roofline/report/row_profile.hpp"

#include <algorithm>
#include <vector>

#include "roofline/core/statistics.hpp"

namespace cfr {

std::optional<std::vector<double>> every_launch_value(const ProfileLaunches& launches) {
  std::vector<double> values;
  for (const std::optional<double>& value : launches.values) {
    if (!value) return std::nullopt;
    values.push_back(*value);
  }
  return values;
}

std::optional<double> launch_spread(const ProfileLaunches& launches) {
  if (launches.values.size() < 2 || launches.recorded >= launches.values.size()) {
    return std::nullopt;
  }
  const auto values = every_launch_value(launches);
  if (!values) return std::nullopt;
  const double recorded = (*values)[launches.recorded];
  if (!(recorded > 0)) return std::nullopt;
  const auto [low, high] = std::minmax_element(values->begin(), values->end());
  return (*high - *low) / recorded;
}

std::optional<double> timer_floor_ms(const TimerFloor& floor) {
  if (floor.events.samples_ms.empty()) return std::nullopt;
  std::vector<double> profiled_ns;
  for (const std::optional<double>& ns : floor.ncu_ns) {
    if (!ns) return std::nullopt;
    profiled_ns.push_back(*ns);
  }
  if (profiled_ns.empty()) return std::nullopt;
  return summarize(floor.events.samples_ms).median - summarize(profiled_ns).median * 1e-6;
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
