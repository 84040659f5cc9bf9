#pragma once

// `plot`: a roofline chart of one or more reports, as an SVG document
// written by our own code. Log-log axes fitted to the data (arithmetic
// intensity in FLOP/byte, performance in TFLOP/s), per ceiling the bandwidth
// slope and a flat roof per compute unit present in the rows (datasheet
// dashed, measured solid) with its ridge point marked, and one marker per
// measured row; a profiled row also at its measured DRAM and L2 AI, under the
// L2 roofs of a ceiling that has an L2 bandwidth; the rows of a read-stream
// kernel (split_kv) under the read roofs of a ceiling that has a read
// bandwidth (docs/model.md §3.1).
//
// The elements carry stable classes and data- attributes so tests and
// scripts can read the chart back:
//   <g class="plot-area" data-x-min data-x-max data-y-min data-y-max
//      data-left data-right data-top data-bottom>
//   <polyline class="roof" data-level (dram, dram_read, l2) data-ceiling data-source data-unit
//      data-bandwidth-GBps data-peak-TFLOPs data-ridge points="slope start,
//      ridge corner, right end">
//   <circle class="ridge" data-unit data-ridge data-tflops>
//   <circle|path class="point" data-row data-report data-kernel data-seq-len
//      data-causal data-auditable data-ai data-tflops>   one per ok row with
//      achieved TFLOP/s > 0: x and y the figures PlotOptions names (ai, achieved TFLOPs);
//      data-row "R-I": the report's index among the inputs, the row's in its results
//   <circle|path class="model-point" ...>  an ok row with no achieved figures
//      (a model projection), drawn hollow gray at its roof
//   <rect class="level-point" data-level data-kernel data-seq-len data-head-dim
//      data-causal data-ai data-tflops>  a profiled row at its measured DRAM
//      (filled) and L2 (hollow) AI, at its achieved TFLOP/s
//   <line class="level-tie" data-kernel>  from the DRAM point to the L2 point
//   <polyline class="roof" data-level="instruction" data-instruction ...>  the roof of
//      an instruction the rows are judged on (their instruction_roof: mma.sync, wgmma,
//      FFMA), where the ceiling measured it: its peak over the rows' memory slope
//   <path class="ai-interval" data-row data-ai-low data-ai-high>  a row's AI interval of
//      the L2-aware model (model/ai_low .. model/ai_high) at its TFLOP/s, when x is model/ai

#include <string>
#include <vector>

#include "roofline/report/report.hpp"

namespace cfr::evidence {

struct PlotReport {
  std::string name;  // the file, shown in tooltips
  const Report* report = nullptr;
};

struct PlotOptions {
  std::string title;  // empty: "Roofline: " + the ceilings' GPU names
  // Measured ceilings (from a `ceilings` file) drawn solid beside the
  // reports' own; units without a figure are not drawn.
  std::vector<CeilingRecord> extra_ceilings;
  // The figures (row_figures() tags) a point is drawn at; a row without a
  // y value is drawn at model/roof_TFLOPs as a model projection.
  std::string x_figure = "model/ai";
  std::string y_figure = "achieved/TFLOPs";
};

struct PlotSummary {
  std::size_t points = 0;
  std::size_t model_points = 0;
  std::size_t roofs = 0;
};

std::string roofline_svg(const std::vector<PlotReport>& reports, const PlotOptions& options,
                         PlotSummary* summary = nullptr);

}  // namespace cfr::evidence
