#include "roofline/core/energy_counter.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace cfr {

namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Why the readings are not a series of one counter: too few, out of time
// order, or a counter that went down.
std::optional<std::string> series_problem(std::span<const CounterReading> r) {
  if (r.size() < 2) {
    return fmt::format("energy counter: {} reading{}, at least 2 needed", r.size(),
                       r.size() == 1 ? "" : "s");
  }
  for (std::size_t i = 1; i < r.size(); ++i) {
    if (!(r[i].t_s > r[i - 1].t_s)) {
      return fmt::format("energy counter: reading {} at {} s is not after reading {} at {} s", i,
                         r[i].t_s, i - 1, r[i - 1].t_s);
    }
    if (r[i].mJ < r[i - 1].mJ) {
      return fmt::format(
          "energy counter went down from {} to {} mJ at {} s: reset (driver reload), not a "
          "64-bit wrap",
          r[i - 1].mJ, r[i].mJ, r[i].t_s);
    }
  }
  return std::nullopt;
}

}  // namespace

OrReason<CounterCadence> counter_cadence(std::span<const CounterReading> r) {
  if (auto problem = series_problem(r)) return std::move(*problem);
  CounterCadence cadence;
  std::vector<double> change_times;
  for (std::size_t i = 1; i < r.size(); ++i) {
    const std::uint64_t step = r[i].mJ - r[i - 1].mJ;
    if (step == 0) continue;
    cadence.resolution_mJ =
        cadence.resolution_mJ == 0 ? step : std::min(cadence.resolution_mJ, step);
    change_times.push_back(r[i].t_s);
  }
  cadence.changes = static_cast<int>(change_times.size());
  if (change_times.size() < 2) {
    return fmt::format(
        "energy counter stalled: {} change{} in {:.3f} s, at least 2 needed to measure its update "
        "period",
        change_times.size(), change_times.size() == 1 ? "" : "s", r.back().t_s - r.front().t_s);
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < change_times.size(); ++i) {
    gaps.push_back(change_times[i] - change_times[i - 1]);
  }
  cadence.update_period_s = median_of(std::move(gaps));
  return cadence;
}

OrReason<CounterInterval> counter_interval(std::span<const CounterReading> r) {
  OrReason<CounterCadence> cadence = counter_cadence(r);
  if (auto* why = std::get_if<std::string>(&cadence)) return std::move(*why);
  CounterInterval interval;
  interval.cadence = std::get<CounterCadence>(cadence);
  interval.seconds = r.back().t_s - r.front().t_s;
  const std::uint64_t mJ = r.back().mJ - r.front().mJ;
  interval.joules = static_cast<double>(mJ) / 1000;
  const CounterCadence& c = interval.cadence;
  if (!(c.update_period_s < counter_rule_fraction * interval.seconds)) {
    return fmt::format(
        "run too short for the energy counter: update period {:.4f} s is not under 1% of its "
        "{:.3f} s",
        c.update_period_s, interval.seconds);
  }
  if (!(static_cast<double>(c.resolution_mJ) < counter_rule_fraction * static_cast<double>(mJ))) {
    return fmt::format(
        "energy counter too coarse for the run: resolution {} mJ is not under 1% of its {} mJ",
        c.resolution_mJ, mJ);
  }
  return interval;
}

double seconds_for_rule(const CounterCadence& cadence, double min_watts, double margin) {
  const double periods = cadence.update_period_s / counter_rule_fraction;
  const double energy =
      static_cast<double>(cadence.resolution_mJ) / 1000 / counter_rule_fraction / min_watts;
  return margin * std::max(periods, energy);
}

double joules_per_launch(const CounterInterval& interval, std::int64_t launches) {
  return interval.joules / static_cast<double>(launches);
}

double flop_per_joule(double flops, double joules_per_launch) {
  return flops / joules_per_launch;
}

}  // namespace cfr
