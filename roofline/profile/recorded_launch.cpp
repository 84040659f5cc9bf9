#include "roofline/profile/recorded_launch.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

std::size_t median_position(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("median_position: no values");
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  return order[(order.size() - 1) / 2];
}

namespace {

// Every launch's value of `metric`, or empty when one lacks it.
std::optional<std::vector<double>> all_values(const std::vector<ncu::RowCounters>& launches,
                                              std::string_view metric) {
  std::vector<double> values;
  for (const ncu::RowCounters& launch : launches) {
    const ncu::MetricValue* value = launch.metric(metric);
    if (value == nullptr || !value->available()) return std::nullopt;
    values.push_back(*value->value);
  }
  return values;
}

}  // namespace

ProfileLaunches choose_recorded_launch(const std::vector<ncu::RowCounters>& launches, int warmup) {
  if (launches.empty()) throw std::invalid_argument("choose_recorded_launch: no launches");
  ProfileLaunches out;
  out.warmup = warmup;
  for (std::string_view metric : {launch_cycles_metric, launch_duration_metric}) {
    if (const auto values = all_values(launches, metric)) {
      out.metric = std::string(metric);
      out.values.assign(values->begin(), values->end());
      out.recorded = median_position(*values);
      return out;
    }
  }
  out.values.assign(launches.size(), std::nullopt);
  return out;
}

std::optional<std::string> recorded_launch_mismatch(const Profile& profile) {
  if (!profile.launches) return std::nullopt;
  const ProfileLaunches& record = *profile.launches;
  if (record.values.empty()) return "profile.launches.values: no launches";
  if (record.recorded >= record.values.size()) {
    return fmt::format("profile.launches.recorded is {}, but {} launches were profiled",
                       record.recorded, record.values.size());
  }
  if (record.metric.empty()) {
    if (record.recorded == 0) return std::nullopt;
    return fmt::format(
        "profile.launches.recorded is {}; without a metric the first launch is recorded",
        record.recorded);
  }
  const auto present = every_launch_value(record);
  if (!present) return fmt::format("profile.launches.values: a launch without {}", record.metric);
  const std::vector<double>& values = *present;
  const std::size_t median = median_position(values);
  if (record.recorded != median) {
    return fmt::format("profile.launches.recorded is {}, but the median launch by {} is {}",
                       record.recorded, record.metric, median);
  }
  const std::optional<double> counted = profile.value(record.metric);
  const double expected = values[record.recorded];
  if (!counted || std::fabs(*counted - expected) > 1e-9 * std::max(1.0, std::fabs(expected))) {
    return fmt::format("profile.counters' {} is {}, but the recorded launch's is {}", record.metric,
                       counted ? fmt::format("{}", *counted) : "absent", expected);
  }
  return std::nullopt;
}

}  // namespace cfr
