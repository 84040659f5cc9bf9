#include "roofline/report/row_energy.hpp"

#include <algorithm>
#include <utility>
#include <variant>

namespace cfr {

namespace {

// Mean clock and power, hottest temperature; absent without probes.
void probe_figures(const std::vector<EnergyProbe>& probes, EnergyDerived& out) {
  if (probes.empty()) return;
  double clock = 0, power = 0, hottest = 0;
  for (const EnergyProbe& p : probes) {
    clock += p.sm_clock_MHz;
    power += p.power_W;
    hottest = std::max(hottest, p.temperature_C);
  }
  const auto n = static_cast<double>(probes.size());
  out.sm_clock_MHz = clock / n;
  out.power_W = power / n;
  out.temperature_C = hottest;
}

}  // namespace

OrReason<EnergyDerived> energy_figures(const Energy& energy, double counted_flops) {
  if (energy.launches <= 0) return std::string("energy: no launches between the readings");
  OrReason<CounterInterval> run = counter_interval(energy.readings);
  if (auto* why = std::get_if<std::string>(&run)) return std::move(*why);
  const CounterInterval& interval = std::get<CounterInterval>(run);
  EnergyDerived out;
  out.joules_per_launch = joules_per_launch(interval, energy.launches);
  out.average_W = interval.watts();
  out.flop_per_J = flop_per_joule(counted_flops, *out.joules_per_launch);
  out.run_s = interval.seconds;
  out.resolution_mJ = static_cast<double>(interval.cadence.resolution_mJ);
  out.update_period_s = interval.cadence.update_period_s;
  const OrReason<CounterInterval> idle = counter_interval(energy.idle_readings);
  if (const auto* quiet = std::get_if<CounterInterval>(&idle)) out.idle_W = quiet->watts();
  probe_figures(energy.probes, out);
  return out;
}

void record_energy_figures(Energy& energy, double counted_flops) {
  if (!energy.collected()) return;  // the measurement's reason stands
  OrReason<EnergyDerived> figures = energy_figures(energy, counted_flops);
  if (auto* why = std::get_if<std::string>(&figures)) {
    energy.derived = {};
    energy.unavailable = std::move(*why);
    return;
  }
  energy.derived = std::get<EnergyDerived>(std::move(figures));
}

}  // namespace cfr
