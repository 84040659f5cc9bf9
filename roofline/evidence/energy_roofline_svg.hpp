#pragma once

// `plot --energy`: the energy roofline (Choi et al., "A roofline model of
// energy", IPDPS 2013) of one or more sweep reports measured with --energy,
// as an SVG document written by our own code. Log-log axes: arithmetic
// intensity (the rows' counted FLOPs over the DRAM model's bytes, as `plot`)
// against GFLOP per joule of the board. Per compute unit of the plotted rows,
// and for fp32 SIMT always (the SIMT peak beside the tensor one), from a
// `ceilings --energy` report (docs/energy.md):
//   - the energy roof: the slope AI x the DRAM copy's bytes per joule up to
//     the unit's best FLOP per joule, flat after (min of the two);
//   - Choi et al.'s combined curve 1 / (1/FLOP_per_J + 1/(AI x B_per_J)),
//     the efficiency when the board spends the joules of both, one after
//     the other (a kernel at the same clock and power cannot overlap them
//     for free in energy as it can in time).
// Both are board energy, idle power included: reference lines, not strict
// bounds (a kernel run at a lower clock can beat them).
//
// Elements, for tests and scripts:
//   <g class="plot-area" data-x-min data-x-max data-y-min data-y-max ...>
//   <polyline class="energy-roof" data-unit data-flop-per-J data-bytes-per-J
//      data-ridge points="slope start, ridge corner, right end">
//   <polyline class="choi-curve" data-unit data-flop-per-J data-bytes-per-J points>
//   <circle class="energy-point" data-row data-report data-kernel data-seq-len
//      data-causal data-ai data-flop-per-J>   one per ok row with energy.flop_per_J

#include <string>
#include <vector>

#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/report/ceilings_report.hpp"

namespace cfr::evidence {

struct EnergyPlotOptions {
  std::string title;  // empty: "Energy roofline: " + the ceilings' GPU name
  // The `ceilings --energy` report the roofs come from, and its file name.
  const CeilingsReport* ceilings = nullptr;
  std::string ceilings_name;
};

struct EnergyPlotSummary {
  std::size_t points = 0;
  std::size_t roofs = 0;
};

// Throws std::invalid_argument when the ceilings have no DRAM copy energy
// (no slope to draw), naming ceilings_name.
std::string energy_roofline_svg(const std::vector<PlotReport>& reports,
                                const EnergyPlotOptions& options,
                                EnergyPlotSummary* summary = nullptr);

}  // namespace cfr::evidence
