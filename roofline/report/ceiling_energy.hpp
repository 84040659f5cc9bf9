#pragma once

// What a ceiling's run of launches cost the board (`ceilings --energy`, issue
// 20): the energy per FLOP of a compute peak and per byte of a bandwidth, the
// two ceilings of the energy roofline (`plot --energy`, docs/energy.md). The
// readings are a row's (row_energy.hpp): the board's counter around a run of
// back-to-back launches of the figure's own launch, the idle interval beside.
// ceiling_energy_figures() derives every figure from them and the figure's
// work per launch, and `audit` calls it again.

#include <optional>
#include <span>
#include <string_view>

#include "roofline/core/errors.hpp"
#include "roofline/report/row_energy.hpp"

namespace cfr {

// What a ceiling's launch does: FLOPs (a TFLOP/s figure) or bytes (a GB/s
// figure); its per-joule figures are named by it.
enum class EnergyWork { flop, byte };

// byte for "GB/s", flop otherwise.
EnergyWork energy_work(std::string_view figure_unit);

// Figures of the readings; each absent where its readings cannot give it.
// The board's figures are energy_figures'; the per-work ones are per FLOP or
// per byte as the figure's EnergyWork says.
struct CeilingEnergyDerived {
  std::optional<double> joules_per_launch;
  std::optional<double> average_W;
  std::optional<double> work_per_J;   // FLOP/J or B/J
  std::optional<double> pJ_per_work;  // pJ per FLOP or per byte: 1e12 / work_per_J
  std::optional<double> run_s;
  std::optional<double> resolution_mJ;
  std::optional<double> update_period_s;
  std::optional<double> idle_W;  // beside average_W, never subtracted from it
  std::optional<double> sm_clock_MHz;
  std::optional<double> temperature_C;
  std::optional<double> power_W;
};

struct CeilingEnergy {
  // FLOPs or bytes of one launch: the work the figure's rate counts.
  double work_per_launch = 0;
  // The counter's readings, the probes, the idle readings and the reason; its
  // own `derived` stays empty (`derived` below names the work).
  Energy run;
  CeilingEnergyDerived derived;

  bool collected() const { return run.collected(); }
};

// One derived figure as the report names it.
struct CeilingEnergyField {
  using Member = std::optional<double> CeilingEnergyDerived::*;

  std::string_view flop_key;  // its key for a compute figure
  std::string_view byte_key;  // its key for a bandwidth figure
  std::string_view unit;      // "J", "W", "FLOP/J or B/J", ...
  Member member;

  std::string_view key(EnergyWork work) const {
    return work == EnergyWork::flop ? flop_key : byte_key;
  }
};

// Every derived figure, in the report's order.
std::span<const CeilingEnergyField> ceiling_energy_fields();

// The figures of `energy`'s readings for launches of its work_per_launch, or
// why they give none (energy_figures' reasons, no work).
OrReason<CeilingEnergyDerived> ceiling_energy_figures(const CeilingEnergy& energy);

// Sets energy.derived from ceiling_energy_figures, or energy.run.unavailable
// to its reason (figures cleared); an energy already unavailable is left as
// it is.
void record_ceiling_energy(CeilingEnergy& energy);

}  // namespace cfr
