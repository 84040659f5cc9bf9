#include "energy_roofline_svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "chart_frame.hpp"
#include "roofline/report/figures.hpp"

namespace cfr::evidence {

namespace {

using namespace chart;

constexpr double roof_font = 11;
constexpr double point_font = 10;
constexpr int curve_samples = 64;  // points of a Choi curve across the axis

// The roofs of each compute unit, in ComputeUnit's order.
constexpr std::array<std::string_view, 4> unit_colours{"#000000", "#555555", "#6a3d9a", "#b15928"};

constexpr double giga = 1e9;  // the y axis is in GFLOP/J

struct EnergyRoof {
  ComputeUnit unit = ComputeUnit::fp32_simt;
  double flop_per_J = 0;
  double bytes_per_J = 0;
  double ridge() const { return flop_per_J / bytes_per_J; }  // FLOP/B
  // min(FLOP/J, AI x B/J), and Choi et al.'s 1 / (1/FLOP/J + 1/(AI x B/J)).
  double roof(double ai) const { return std::min(flop_per_J, ai * bytes_per_J); }
  double combined(double ai) const { return 1 / (1 / flop_per_J + 1 / (ai * bytes_per_J)); }
};

struct EnergyMarker {
  std::string report;
  const ResultRow* row = nullptr;
  std::string row_id;  // "R-I": the report's index among the inputs, the row's in its results
  double ai = 0;
  double flop_per_J = 0;
};

bool plottable(double x) {
  return std::isfinite(x) && x > 0;
}

class EnergyChart {
 public:
  EnergyChart(const std::vector<PlotReport>& reports, const EnergyPlotOptions& options)
      : reports_(reports), options_(options), ai_figure_(figure("model/ai")) {
    collect_markers();
    collect_roofs();
    make_axes();
    plan_labels();
  }

  std::string render(EnergyPlotSummary* summary) const {
    std::string out =
        svg_head(default_canvas_height, title(),
                 fmt::format("Board energy (NVML's counter, idle power included); lines from "
                             "{}: reference lines, not bounds.",
                             options_.ceilings_name));
    out += plot_area_open(x_, y_);
    out += render_grid(x_, y_, axis_x_label(),
                       "energy.flop_per_J: counted FLOPs per joule of the board (GFLOP/J)");
    out += render_roofs();
    out += render_markers();
    out += "</g>\n";
    out += render_legend();
    out += "</svg>\n";
    if (summary != nullptr) *summary = {markers_.size(), roofs_.size()};
    return out;
  }

 private:
  void collect_markers() {
    for (std::size_t r = 0; r < reports_.size(); ++r) {
      const std::vector<ResultRow>& rows = reports_[r].report->results;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const ResultRow& row = rows[i];
        if (row.status != RowStatus::ok || !row.energy || !row.energy->collected()) continue;
        const std::optional<double> ai = figure_number(ai_figure_, row);
        const std::optional<double> per_J = row.energy->derived.flop_per_J;
        if (!ai || !per_J || !plottable(*ai) || !plottable(*per_J)) continue;
        markers_.push_back({reports_[r].name, &row, fmt::format("{}-{}", r, i), *ai, *per_J});
        if (std::find(kernels_.begin(), kernels_.end(), row.kernel) == kernels_.end()) {
          kernels_.push_back(row.kernel);
        }
      }
    }
  }

  // A roof per compute unit of the plotted rows, and the fp32 SIMT one
  // always (the two peaks: tensor and SIMT), where the ceilings have
  // an energy figure of the unit.
  void collect_roofs() {
    const std::optional<double> bytes_per_J = options_.ceilings->dram_bytes_per_J();
    if (!bytes_per_J || !plottable(*bytes_per_J)) {
      throw std::invalid_argument(fmt::format(
          "{}: no energy figures of dram_bandwidth (measure them with `ceilings --energy`)",
          options_.ceilings_name));
    }
    for (ComputeUnit unit : all_compute_units) {
      const bool used = unit == ComputeUnit::fp32_simt ||
                        std::any_of(markers_.begin(), markers_.end(), [&](const EnergyMarker& m) {
                          return m.row->compute_unit == unit;
                        });
      const std::optional<double> flop_per_J = options_.ceilings->best_flop_per_J(unit);
      if (used && flop_per_J && plottable(*flop_per_J)) {
        roofs_.push_back({unit, *flop_per_J, *bytes_per_J});
      }
    }
  }

  void make_axes() {
    std::vector<double> xs;
    std::vector<double> ys;
    for (const EnergyMarker& m : markers_) {
      xs.push_back(m.ai);
      ys.push_back(m.flop_per_J / giga);
    }
    for (const EnergyRoof& r : roofs_) {
      xs.push_back(r.ridge());
      ys.push_back(r.flop_per_J / giga);
    }
    x_ = axis_covering(xs, 1.3, 8, plot_left, plot_right);
    y_ = axis_covering(ys, 1.3, 8, plot_bottom, plot_top);
  }

  // Where a roof's slope enters the plot: the left edge or the bottom.
  double slope_start(const EnergyRoof& r) const {
    return std::max(x_.min(), y_.min() * giga / r.bytes_per_J);
  }

  std::string roof_label(const EnergyRoof& r) const {
    return fmt::format("{} {} GFLOP/J ({} pJ/FLOP), ridge {}", to_string(r.unit),
                       readable(r.flop_per_J / giga), readable(1e12 / r.flop_per_J),
                       readable(r.ridge()));
  }

  std::string slope_label() const {
    const double bytes_per_J = roofs_.front().bytes_per_J;
    return fmt::format("DRAM {} GB/J ({} pJ/B)", readable(bytes_per_J / giga),
                       readable(1e12 / bytes_per_J));
  }

  std::string point_label(const EnergyMarker& m) const {
    const std::int64_t n = m.row->problem.seq_len;
    return n >= 1024 && n % 1024 == 0 ? fmt::format("{}K", n / 1024) : fmt::format("{}", n);
  }

  // Markers first (labels go around them), then the roofs' labels, the
  // slope's, then the points'. A label with no free place is left out.
  void plan_labels() {
    LabelPlacer placer(plot_left + 2, plot_top + 2, plot_right - 2, plot_bottom - 2);
    for (const EnergyMarker& m : markers_) {
      const double x = x_.to_pixel(m.ai);
      const double y = y_.to_pixel(m.flop_per_J / giga);
      placer.block({x - 6, y - 6, x + 6, y + 6});
    }
    constexpr double line = 13;
    for (const EnergyRoof& r : roofs_) {
      const double y = y_.to_pixel(r.flop_per_J / giga);
      std::vector<LabelSpot> spots;
      for (int k = 0; k < 10; ++k) {
        spots.push_back({plot_right - 4, y - 5 - line * k, Anchor::end});
        spots.push_back({plot_right - 4, y + 14 + line * k, Anchor::end});
      }
      roof_label_spots_.push_back(placer.place(roof_label(r), roof_font, spots));
    }
    if (!roofs_.empty()) {
      const EnergyRoof& r = roofs_.front();
      const double x0 = x_.to_pixel(slope_start(r));
      const double y0 = y_.to_pixel(r.roof(slope_start(r)) / giga);
      const double x1 = x_.to_pixel(r.ridge());
      const double y1 = y_.to_pixel(r.flop_per_J / giga);
      std::vector<LabelSpot> spots;
      for (int k = 0; k < 10; ++k) {  // along the slope, above it, then below it
        const double t = k / 10.0;
        spots.push_back({x0 + t * (x1 - x0) - 6, y0 + t * (y1 - y0) - 6, Anchor::end});
        spots.push_back({x0 + t * (x1 - x0) + 8, y0 + t * (y1 - y0) + 14, Anchor::start});
      }
      slope_label_spot_ = placer.place(slope_label(), roof_font, spots);
    }
    for (const EnergyMarker& m : markers_) {
      const double x = x_.to_pixel(m.ai);
      const double y = y_.to_pixel(m.flop_per_J / giga);
      point_label_spots_.push_back(placer.place(point_label(m), point_font,
                                                {{x + 8, y + 3.5, Anchor::start},
                                                 {x - 8, y + 3.5, Anchor::end},
                                                 {x, y - 8, Anchor::middle},
                                                 {x, y + 16, Anchor::middle}}));
    }
  }

  std::string title() const {
    if (!options_.title.empty()) return options_.title;
    return "Energy roofline: " + options_.ceilings->device.name;
  }

  std::string axis_x_label() const {
    return fmt::format("{}: {} ({})", ai_figure_.label, ai_figure_.description,
                       display_unit(ai_figure_));
  }

  std::string unit_colour(ComputeUnit unit) const {
    return std::string(unit_colours[static_cast<std::size_t>(unit) % unit_colours.size()]);
  }

  // The Choi curve's points across the axis, from where it enters the plot.
  std::string curve_points(const EnergyRoof& r) const {
    std::string points;
    for (int k = 0; k <= curve_samples; ++k) {
      const double ai = x_.min() * std::pow(x_.max() / x_.min(), k / double(curve_samples));
      const double y = r.combined(ai) / giga;
      if (y < y_.min()) continue;
      points += fmt::format("{}{},{}", points.empty() ? "" : " ", px(x_.to_pixel(ai)),
                            px(y_.to_pixel(y)));
    }
    return points;
  }

  std::string render_roofs() const {
    std::string out = "<g class=\"roofs\" fill=\"none\">\n";
    for (std::size_t i = 0; i < roofs_.size(); ++i) {
      const EnergyRoof& r = roofs_[i];
      const double x0 = slope_start(r);
      const std::string colour = unit_colour(r.unit);
      const std::string data =
          fmt::format("data-unit=\"{}\" data-flop-per-J=\"{}\" data-bytes-per-J=\"{}\"",
                      to_string(r.unit), num(r.flop_per_J), num(r.bytes_per_J));
      out += fmt::format(
          "<polyline class=\"energy-roof\" {} data-ridge=\"{}\" points=\"{},{} {},{} {},{}\" "
          "stroke=\"{}\" stroke-width=\"2\"/>\n",
          data, num(r.ridge()), px(x_.to_pixel(x0)), px(y_.to_pixel(r.roof(x0) / giga)),
          px(x_.to_pixel(r.ridge())), px(y_.to_pixel(r.flop_per_J / giga)),
          px(x_.to_pixel(x_.max())), px(y_.to_pixel(r.flop_per_J / giga)), colour);
      out += fmt::format(
          "<polyline class=\"choi-curve\" {} points=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"6 4\"><title>Choi et al. combined curve of {}: 1/(1/FLOP_per_J + "
          "1/(AI x B_per_J))</title></polyline>\n",
          data, curve_points(r), colour, to_string(r.unit));
      if (const auto& spot = roof_label_spots_[i]) {
        out += placed_label("roof-label", *spot, colour, roof_font, roof_label(r));
      }
    }
    if (slope_label_spot_) {
      out += placed_label("bandwidth-label", *slope_label_spot_, "#000", roof_font, slope_label());
    }
    out += "</g>\n";
    return out;
  }

  std::string colour_of(const std::string& kernel) const {
    const auto index = static_cast<std::size_t>(
        std::find(kernels_.begin(), kernels_.end(), kernel) - kernels_.begin());
    return std::string(kernel_colours[index % kernel_colours.size()]);
  }

  std::string render_markers() const {
    std::string out = "<g class=\"points\">\n";
    for (std::size_t i = 0; i < markers_.size(); ++i) {
      const EnergyMarker& m = markers_[i];
      const ResultRow& row = *m.row;
      const std::string colour = colour_of(row.kernel);
      out += fmt::format(
          "<circle class=\"energy-point\" data-row=\"{}\" data-report=\"{}\" data-kernel=\"{}\" "
          "data-seq-len=\"{}\" data-causal=\"{}\" data-ai=\"{}\" data-flop-per-J=\"{}\" "
          "cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\" stroke=\"{}\"><title>{}: {} GFLOP/J at {} "
          "FLOP/byte ({})</title></circle>\n",
          m.row_id, attr(m.report), attr(row.kernel), row.problem.seq_len,
          row.problem.causal ? "true" : "false", num(m.ai), num(m.flop_per_J),
          px(x_.to_pixel(m.ai)), px(y_.to_pixel(m.flop_per_J / giga)), colour, colour,
          attr(row_label(row)), readable(m.flop_per_J / giga), readable(m.ai), attr(m.report));
      if (const auto& spot = point_label_spots_[i]) {
        out += fmt::format(
            "<text class=\"point-label\" x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\" "
            "fill=\"#333\">{}</text>\n",
            px(spot->x), px(spot->y), anchor_name(spot->anchor), point_font, attr(point_label(m)));
      }
    }
    out += "</g>\n";
    return out;
  }

  std::string render_legend() const {
    std::string out = "<g class=\"legend\" font-size=\"11\">\n";
    double y = plot_top;
    const auto text = [&](const std::string& body, bool bold = false) {
      out += fmt::format("<text x=\"{}\" y=\"{}\"{}>{}</text>\n", legend_left, px(y),
                         bold ? " font-weight=\"bold\"" : "", attr(body));
      y += 16;
    };
    text("Kernels", true);
    for (const std::string& kernel : kernels_) {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
                         legend_left, px(y - 10), colour_of(kernel));
      out +=
          fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", legend_left + 18, px(y), attr(kernel));
      y += 16;
    }
    y += 8;
    text("Lines, per compute unit", true);
    for (const EnergyRoof& r : roofs_) {
      out += fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>",
          legend_left, px(y - 4), legend_left + 14, unit_colour(r.unit));
      out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", legend_left + 18, px(y),
                         to_string(r.unit));
      y += 16;
    }
    text("solid: min(FLOP/J, AI x B/J)");
    text("dashed: Choi et al. combined,");
    text("  1/(1/FLOP_per_J + 1/(AI x B_per_J))");
    y += 8;
    text("Board energy, idle power included:");
    text("reference lines, not strict bounds");
    text("(a kernel at a lower clock can beat them).");
    text("label: sequence length N");
    out += "</g>\n";
    return out;
  }

  const std::vector<PlotReport>& reports_;
  const EnergyPlotOptions& options_;
  const Figure& ai_figure_;
  std::vector<EnergyMarker> markers_;
  std::vector<std::string> kernels_;  // colour order
  std::vector<EnergyRoof> roofs_;
  LogAxis x_;
  LogAxis y_;
  std::vector<std::optional<LabelSpot>> roof_label_spots_;   // per roof
  std::optional<LabelSpot> slope_label_spot_;                // the DRAM slope, shared by all
  std::vector<std::optional<LabelSpot>> point_label_spots_;  // per marker
};

}  // namespace

std::string energy_roofline_svg(const std::vector<PlotReport>& reports,
                                const EnergyPlotOptions& options, EnergyPlotSummary* summary) {
  return EnergyChart(reports, options).render(summary);
}

}  // namespace cfr::evidence
