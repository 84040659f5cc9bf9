#include "roofline/report/ceiling_energy.hpp"

#include <array>
#include <utility>
#include <variant>

namespace cfr {

EnergyWork energy_work(std::string_view figure_unit) {
  return figure_unit == "GB/s" ? EnergyWork::byte : EnergyWork::flop;
}

std::span<const CeilingEnergyField> ceiling_energy_fields() {
  using D = CeilingEnergyDerived;
  static constexpr std::array<CeilingEnergyField, 11> fields{{
      {"joules_per_launch", "joules_per_launch", "J", &D::joules_per_launch},
      {"average_W", "average_W", "W", &D::average_W},
      {"flop_per_J", "bytes_per_J", "FLOP/J or B/J", &D::work_per_J},
      {"pJ_per_flop", "pJ_per_byte", "pJ", &D::pJ_per_work},
      {"run_s", "run_s", "s", &D::run_s},
      {"resolution_mJ", "resolution_mJ", "mJ", &D::resolution_mJ},
      {"update_period_s", "update_period_s", "s", &D::update_period_s},
      {"idle_W", "idle_W", "W", &D::idle_W},
      {"sm_clock_MHz", "sm_clock_MHz", "MHz", &D::sm_clock_MHz},
      {"temperature_C", "temperature_C", "C", &D::temperature_C},
      {"power_W", "power_W", "W", &D::power_W},
  }};
  return fields;
}

OrReason<CeilingEnergyDerived> ceiling_energy_figures(const CeilingEnergy& energy) {
  if (!(energy.work_per_launch > 0)) return std::string("energy: no work per launch");
  OrReason<EnergyDerived> board = energy_figures(energy.run, energy.work_per_launch);
  if (auto* why = std::get_if<std::string>(&board)) return std::move(*why);
  const EnergyDerived& b = std::get<EnergyDerived>(board);
  CeilingEnergyDerived out;
  out.joules_per_launch = b.joules_per_launch;
  out.average_W = b.average_W;
  // energy_figures' FLOPs per joule, of the figure's work: FLOPs or bytes.
  out.work_per_J = b.flop_per_J;
  out.pJ_per_work = 1e12 / *b.flop_per_J;
  out.run_s = b.run_s;
  out.resolution_mJ = b.resolution_mJ;
  out.update_period_s = b.update_period_s;
  out.idle_W = b.idle_W;
  out.sm_clock_MHz = b.sm_clock_MHz;
  out.temperature_C = b.temperature_C;
  out.power_W = b.power_W;
  return out;
}

void record_ceiling_energy(CeilingEnergy& energy) {
  if (!energy.collected()) return;  // the measurement's reason stands
  OrReason<CeilingEnergyDerived> figures = ceiling_energy_figures(energy);
  if (auto* why = std::get_if<std::string>(&figures)) {
    energy.derived = {};
    energy.run.unavailable = std::move(*why);
    return;
  }
  energy.derived = std::get<CeilingEnergyDerived>(std::move(figures));
}

}  // namespace cfr
