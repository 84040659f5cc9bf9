#include "roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "chart_frame.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/instruction_roof.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::evidence {

namespace {

using namespace chart;

constexpr std::string_view model_gray = "#8a8a8a";
// The L2 bandwidth roofs of a hierarchical chart.
constexpr std::string_view l2_blue = "#2b6fb0";
// The DRAM read roofs, under which a read-stream kernel's rows sit.
constexpr std::string_view read_teal = "#00796b";
// The roof of the instruction a kernel's matmuls issue, measured by `ceilings`.
constexpr std::string_view instruction_purple = "#7b3fa0";
constexpr double roof_font = 11;
constexpr double point_font = 10;

// GB/s x FLOP/byte = 1e9 FLOP/s = 1e-3 TFLOP/s.
constexpr double tflops_per_GBps_flop_per_byte = 1e-3;

struct Roof {
  std::string ceiling;  // GPU label
  std::string gpu;      // the ceiling's GPU table id: roofs of one GPU share it
  std::string source;   // "datasheet" or "measured"
  ComputeUnit unit = ComputeUnit::fp32_simt;
  double bandwidth_GBps = 0;
  double peak_TFLOPs = 0;
  // The bandwidth the slope is: dram (the ceiling's copy or datasheet
  // figure), dram_read (its read stream) or l2; `instruction`: the slope of
  // the memory roof its rows use, under the instruction's measured peak.
  std::string level = "dram";
  std::string instruction;  // the `ceilings` figure of an instruction roof: "fp16_tensor_mma"
  double ridge() const { return cfr::ridge(peak_TFLOPs, bandwidth_GBps); }
  bool measured() const { return source == "measured"; }
  bool l2() const { return level == "l2"; }
  bool read() const { return level == "dram_read"; }
  bool of_instruction() const { return level == "instruction"; }
  // A roof drawn beside the DRAM one: labelled at its ridge.
  bool beside() const { return l2() || read() || of_instruction(); }
  std::string_view name() const {
    return l2() ? "L2" : read() ? "DRAM read" : of_instruction() ? "instruction" : "DRAM";
  }
  std::string colour() const {
    if (l2()) return std::string(l2_blue);
    if (read()) return std::string(read_teal);
    if (of_instruction()) return std::string(instruction_purple);
    return measured() ? "#000000" : "#555555";
  }
};

struct Marker {
  std::string report;
  std::string gpu;  // the report's ceiling id, to tell GPUs apart in the label
  const ResultRow* row = nullptr;
  // "R-I": the report's index among the inputs, the row's in its results.
  std::string row_id;
  bool auditable = false;
  bool model = false;  // a projection drawn at its roof
  double ai = 0;
  double tflops = 0;
  // A profiled row's AI at each memory level (measured bytes), drawn at the
  // same TFLOP/s and tied together.
  std::optional<double> ai_dram;
  std::optional<double> ai_l2;
  // The model's AI interval (model/ai_low, model/ai_high) when the x axis is
  // the model's AI: drawn as a horizontal bar through the marker.
  std::optional<double> ai_low;
  std::optional<double> ai_high;
};

// Marker size encodes the head dim.
double marker_radius(std::int64_t head_dim) {
  return head_dim <= 32 ? 3.5 : head_dim <= 64 ? 5 : 7;
}

std::string ceiling_label(const CeilingRecord& c) {
  return c.gpu_name.empty() ? c.gpu : c.gpu_name;
}

std::string seq_label(std::int64_t n) {
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{}K", n / 1024);
  return fmt::format("{}", n);
}

bool plottable(double x) {
  return std::isfinite(x) && x > 0;
}

// "AI: arithmetic intensity, counted FLOPs / modelled DRAM bytes (FLOP/B)"
std::string axis_label(const Figure& f) {
  return fmt::format("{}: {} ({})", f.label, f.description, display_unit(f));
}

class Chart {
 public:
  Chart(const std::vector<PlotReport>& reports, const PlotOptions& options)
      : reports_(reports),
        options_(options),
        x_figure_(figure(options.x_figure)),
        y_figure_(figure(options.y_figure)),
        roof_figure_(figure("model/roof_TFLOPs")) {
    collect_markers();
    collect_roofs();
    make_axes();
    plan_labels();
  }

  std::string render(PlotSummary* summary) {
    double legend_bottom = 0;
    const std::string legend = render_legend(legend_bottom);
    // Tall enough for the legend: it lists every roof.
    const double canvas_height = std::max(default_canvas_height, legend_bottom + 20);
    std::string out = svg_head(canvas_height, title(), subtitle());
    out += plot_area_open(x_, y_);
    out += render_grid(x_, y_, axis_label(x_figure_), axis_label(y_figure_));
    out += render_roofs();
    out += render_markers();
    out += "</g>\n";
    out += legend;
    out += "</svg>\n";
    if (summary != nullptr) {
      summary->points = static_cast<std::size_t>(std::count_if(
          markers_.begin(), markers_.end(), [](const Marker& m) { return !m.model; }));
      summary->model_points = markers_.size() - summary->points;
      summary->roofs = roofs_.size();
    }
    return out;
  }

 private:
  // x and y of a row from the chart's figures; a row with no measured y is
  // a model projection drawn at its roof.
  void collect_markers() {
    for (const PlotReport& input : reports_) {
      const Report& report = *input.report;
      for (const ResultRow& row : report.results) {
        const auto x = figure_number(x_figure_, row);
        if (row.status != RowStatus::ok || !x || !plottable(*x)) continue;
        Marker marker;
        marker.report = input.name;
        marker.gpu = report.ceiling.gpu;
        marker.row = &row;
        marker.row_id =
            fmt::format("{}-{}", &input - reports_.data(), &row - report.results.data());
        marker.auditable = report.provenance.auditable;
        marker.ai = *x;
        const auto measured = figure_number(y_figure_, row);
        const auto roof = figure_number(roof_figure_, row);
        if (measured && plottable(*measured)) {
          marker.tflops = *measured;
        } else if (!measured && roof && plottable(*roof)) {
          marker.model = true;
          marker.tflops = *roof;
        } else {
          continue;
        }
        if (options_.x_figure == "model/ai" && row.model && row.model->ai_low &&
            row.model->ai_high && plottable(*row.model->ai_low) && plottable(*row.model->ai_high)) {
          marker.ai_low = row.model->ai_low;
          marker.ai_high = row.model->ai_high;
        }
        if (!marker.model && row.profile && row.profile->collected()) {
          const ProfileDerived& levels = row.profile->derived;
          if (levels.dram.ai && plottable(*levels.dram.ai)) marker.ai_dram = levels.dram.ai;
          if (levels.l2.ai && plottable(*levels.l2.ai)) marker.ai_l2 = levels.l2.ai;
          hierarchical_ = hierarchical_ || marker.ai_l2.has_value();
        }
        several_gpus_ = several_gpus_ || (!markers_.empty() && markers_.front().gpu != marker.gpu);
        markers_.push_back(marker);
        if (!marker.model &&
            std::find(kernels_.begin(), kernels_.end(), row.kernel) == kernels_.end()) {
          kernels_.push_back(row.kernel);
        }
      }
    }
  }

  // The DRAM roofs of the ceiling; its DRAM read roofs where it has a read
  // bandwidth, for the units of the rows it would judge on them; its L2
  // roofs where it has an L2 bandwidth and some row has a measured L2 point.
  void add_roofs(const CeilingRecord& ceiling, const std::set<ComputeUnit>& units,
                 const std::vector<const Report*>& reports) {
    add_level_roofs(ceiling, units, "dram", ceiling.bandwidth_GBps);
    if (ceiling.read_bandwidth_GBps) {
      add_level_roofs(ceiling, read_stream_units(reports, ceiling), "dram_read",
                      *ceiling.read_bandwidth_GBps);
    }
    if (hierarchical_ && ceiling.l2_bandwidth_GBps) {
      add_level_roofs(ceiling, units, "l2", *ceiling.l2_bandwidth_GBps);
    }
    add_instruction_roofs(ceiling, reports);
  }

  // The roof of each instruction the ok rows are judged on that this ceiling
  // measured, over the memory roof the row uses. A row measured against a
  // ceiling without instruction figures (the datasheet's) records none; its
  // kernel's instruction is then the registry's, so a `--ceilings` file
  // still draws the roof the row's matmuls can reach.
  void add_instruction_roofs(const CeilingRecord& ceiling,
                             const std::vector<const Report*>& reports) {
    for (const Report* report : reports) {
      for (const ResultRow& row : report->results) {
        if (row.status != RowStatus::ok || !row.model) continue;
        const std::optional<std::string> figure = instruction_figure_of(row);
        if (!figure) continue;
        const std::string& name = *figure;
        const auto peak = ceiling.instruction_TFLOPs.find(name);
        if (peak == ceiling.instruction_TFLOPs.end() || !plottable(peak->second)) continue;
        const double bandwidth = ceiling.bandwidth(row.model->memory_roof_used());
        if (!plottable(bandwidth)) continue;
        Roof roof{ceiling_label(ceiling), ceiling.gpu, ceiling.source,
                  row.compute_unit,       bandwidth,   peak->second,
                  "instruction",          name};
        add_unique(roof);
      }
    }
  }

  static std::optional<std::string> instruction_figure_of(const ResultRow& row) {
    if (row.model->instruction_roof) return row.model->instruction_roof->figure;
    const KernelDescription* kernel = find_kernel(row.kernel);
    if (kernel == nullptr) return std::nullopt;  // a plugin's or a peer's row
    return instruction_figure(kernel->instruction, row.problem.dtype);
  }

  void add_level_roofs(const CeilingRecord& ceiling, const std::set<ComputeUnit>& units,
                       const std::string& level, double bandwidth_GBps) {
    if (!plottable(bandwidth_GBps)) return;
    for (ComputeUnit unit : units) {
      const auto peak = ceiling.peak(unit);
      if (!peak || !plottable(*peak)) continue;
      Roof roof{ceiling_label(ceiling), ceiling.gpu, ceiling.source, unit,
                bandwidth_GBps,         *peak,       level,          ""};
      if (!plottable(roof.ridge())) continue;
      add_unique(roof);
    }
  }

  // The same figures are one roof, whatever the ceiling calls its GPU: a
  // report measured against results/h200/ceilings.json names it by the GPU
  // table ("NVIDIA H200 SXM 141GB"), the file by the device ("NVIDIA H200"),
  // and the legend listed each roof twice and the title both names (issue 24).
  void add_unique(const Roof& roof) {
    const auto same = [&](const Roof& r) {
      return std::tie(r.source, r.unit, r.instruction, r.bandwidth_GBps, r.peak_TFLOPs, r.level) ==
             std::tie(roof.source, roof.unit, roof.instruction, roof.bandwidth_GBps,
                      roof.peak_TFLOPs, roof.level);
    };
    if (std::none_of(roofs_.begin(), roofs_.end(), same)) roofs_.push_back(roof);
  }

  // The compute units of the ok rows that `ceiling` judges on its read
  // roof (memory_roof, row_model.hpp: a read-stream kernel's).
  static std::set<ComputeUnit> read_stream_units(const std::vector<const Report*>& reports,
                                                 const CeilingRecord& ceiling) {
    std::set<ComputeUnit> units;
    for (const Report* report : reports) {
      for (const ResultRow& row : report->results) {
        if (row.status != RowStatus::ok || !row.model) continue;
        if (memory_roof(row.model->traffic.model, ceiling) == MemoryRoof::dram_read) {
          units.insert(row.compute_unit);
        }
      }
    }
    return units;
  }

  void collect_roofs() {
    std::set<ComputeUnit> all_units;
    std::vector<const Report*> all_reports;
    for (const PlotReport& input : reports_) {
      std::set<ComputeUnit> units;
      for (const ResultRow& row : input.report->results) {
        if (row.status == RowStatus::ok) units.insert(row.compute_unit);
      }
      add_roofs(input.report->ceiling, units, {input.report});
      all_units.insert(units.begin(), units.end());
      all_reports.push_back(input.report);
    }
    for (const CeilingRecord& ceiling : options_.extra_ceilings) {
      add_roofs(ceiling, all_units, all_reports);
    }
  }

  void make_axes() {
    std::vector<double> xs;
    std::vector<double> ys;
    for (const Marker& m : markers_) {
      xs.push_back(m.ai);
      ys.push_back(m.tflops);
      if (m.ai_low) xs.push_back(*m.ai_low);
      if (m.ai_high) xs.push_back(*m.ai_high);
      if (m.ai_dram) xs.push_back(*m.ai_dram);
      if (m.ai_l2) xs.push_back(*m.ai_l2);
    }
    for (const Roof& r : roofs_) {
      xs.push_back(r.ridge());
      ys.push_back(r.peak_TFLOPs);
    }
    // A margin of 30 % around the points, roofs and ridges, ends at 1, 2 or 5 x 10^k.
    x_ = axis_covering(xs, 1.3, 8, plot_left, plot_right);
    y_ = axis_covering(ys, 1.3, 8, plot_bottom, plot_top);
  }

  // Where the slope of a roof enters the plot: the left edge or the bottom.
  double slope_start(const Roof& r) const {
    return std::max(x_.min(), y_.min() / (r.bandwidth_GBps * tflops_per_GBps_flop_per_byte));
  }

  std::string roof_label(const Roof& r) const {
    if (r.of_instruction()) {
      return fmt::format("{} {} TFLOP/s, ridge {} ({})", r.instruction, readable(r.peak_TFLOPs),
                         readable(r.ridge()), r.source);
    }
    if (r.l2()) {
      return fmt::format("{} L2 ridge {} ({})", to_string(r.unit), readable(r.ridge()), r.source);
    }
    if (r.read()) {
      return fmt::format("{} read ridge {} ({})", to_string(r.unit), readable(r.ridge()), r.source);
    }
    // The GPU is named where the chart has roofs of several (the title names a single one).
    const bool several =
        std::any_of(roofs_.begin(), roofs_.end(), [&](const Roof& o) { return o.gpu != r.gpu; });
    return fmt::format("{}{} {} TFLOP/s, ridge {} ({})", several ? r.ceiling + " " : "",
                       to_string(r.unit), readable(r.peak_TFLOPs), readable(r.ridge()), r.source);
  }

  std::string slope_label(const Roof& r) const {
    return fmt::format("{} {} GB/s ({})", r.name(), readable(r.bandwidth_GBps), r.source);
  }

  // Roofs of one ceiling and level share the slope; it is labelled once. An
  // instruction roof's slope is its memory roof's, labelled there.
  bool slope_labelled_before(std::size_t i) const {
    const Roof& r = roofs_[i];
    if (r.of_instruction()) return true;
    return std::any_of(roofs_.begin(), roofs_.begin() + static_cast<std::ptrdiff_t>(i),
                       [&](const Roof& o) {
                         return o.ceiling == r.ceiling && o.source == r.source &&
                                o.bandwidth_GBps == r.bandwidth_GBps && o.level == r.level;
                       });
  }

  std::string point_label(const Marker& m) const {
    return seq_label(m.row->problem.seq_len) + (several_gpus_ ? " " + m.gpu : "") +
           (!m.model && !m.auditable ? " unauditable" : "");
  }

  // Every label's place, before anything is drawn: markers and ridge points
  // first (labels go around them), then the roofs' labels, then the points'
  // (right, left, above, below, then the diagonals). A label with no free
  // place is left out (its marker keeps its tooltip).
  void plan_labels() {
    LabelPlacer placer(plot_left + 2, plot_top + 2, plot_right - 2, plot_bottom - 2);
    for (const Marker& m : markers_) {
      const double r = marker_radius(m.row->problem.head_dim) + 1;
      const double y = y_.to_pixel(m.tflops);
      for (const auto ai : {std::optional<double>(m.ai), m.ai_dram, m.ai_l2}) {
        if (!ai) continue;
        const double x = x_.to_pixel(*ai);
        placer.block({x - r, y - r, x + r, y + r});
      }
    }
    for (const Roof& r : roofs_) {
      const double x = x_.to_pixel(r.ridge());
      const double y = y_.to_pixel(r.peak_TFLOPs);
      placer.block({x - 4, y - 4, x + 4, y + 4});
    }
    constexpr double line = 13;
    for (std::size_t i = 0; i < roofs_.size(); ++i) {
      const Roof& r = roofs_[i];
      const double ridge_x = x_.to_pixel(r.ridge());
      const double peak_y = y_.to_pixel(r.peak_TFLOPs);
      std::vector<LabelSpot> spots;
      for (int k = 0; k < 10; ++k) {
        const double above = peak_y - 5 - line * k;
        const double below = peak_y + 14 + line * k;
        if (r.beside()) {
          spots.push_back({ridge_x + 6, below, Anchor::start});
          spots.push_back({ridge_x - 6, below, Anchor::end});
        } else {
          spots.push_back({plot_right - 4, above, Anchor::end});
          spots.push_back({plot_right - 4, below, Anchor::end});
          spots.push_back({ridge_x + 6, above, Anchor::start});
          spots.push_back({ridge_x + 6, below, Anchor::start});
        }
      }
      roof_label_spots_.push_back(placer.place(roof_label(r), roof_font, spots));
      std::vector<LabelSpot> slope_spots;
      if (!slope_labelled_before(i)) {
        const double x0 = x_.to_pixel(slope_start(r));
        const double y0 =
            y_.to_pixel(slope_start(r) * r.bandwidth_GBps * tflops_per_GBps_flop_per_byte);
        for (int k = 0; k < 10; ++k) {  // along the slope, above it, then below it
          const double t = k / 10.0;
          slope_spots.push_back(
              {x0 + t * (ridge_x - x0) + 6, y0 + t * (peak_y - y0) - 6, Anchor::start});
        }
        for (int k = 0; k < 10; ++k) {
          const double t = k / 10.0;
          slope_spots.push_back(
              {x0 + t * (ridge_x - x0) + 8, y0 + t * (peak_y - y0) + 14, Anchor::start});
        }
      }
      slope_label_spots_.push_back(slope_spots.empty()
                                       ? std::nullopt
                                       : placer.place(slope_label(r), roof_font, slope_spots));
    }
    for (const Marker& m : markers_) {
      const double x = x_.to_pixel(m.ai);
      const double y = y_.to_pixel(m.tflops);
      const double r = marker_radius(m.row->problem.head_dim);
      const std::vector<LabelSpot> spots{
          {x + r + 3, y + 3.5, Anchor::start},   {x - r - 3, y + 3.5, Anchor::end},
          {x, y - r - 3, Anchor::middle},        {x, y + r + 11, Anchor::middle},
          {x + r + 1, y - r - 1, Anchor::start}, {x + r + 1, y + r + 9, Anchor::start},
          {x - r - 1, y - r - 1, Anchor::end},   {x - r - 1, y + r + 9, Anchor::end}};
      point_label_spots_.push_back(placer.place(point_label(m), point_font, spots));
    }
  }

  std::string title() const {
    if (!options_.title.empty()) return options_.title;
    std::vector<std::string> gpus;
    for (const Roof& r : roofs_) {
      if (std::find(gpus.begin(), gpus.end(), r.ceiling) == gpus.end()) gpus.push_back(r.ceiling);
    }
    std::string names;
    for (const std::string& g : gpus) names += (names.empty() ? "" : ", ") + g;
    return names.empty() ? "Roofline" : "Roofline: " + names;
  }

  std::string subtitle() const {
    const bool any_unauditable =
        std::any_of(reports_.begin(), reports_.end(),
                    [](const PlotReport& r) { return !r.report->provenance.auditable; });
    return any_unauditable ? "Hollow markers are NOT evidence (unauditable or historical reports)."
                           : "Every marker comes from an auditable measured report.";
  }

  std::string render_roofs() const {
    std::string out = "<g class=\"roofs\" fill=\"none\">\n";
    for (std::size_t i = 0; i < roofs_.size(); ++i) {
      const Roof& r = roofs_[i];
      const double slope = r.bandwidth_GBps * tflops_per_GBps_flop_per_byte;
      const double x_start = slope_start(r);
      const double ridge = r.ridge();
      const std::string colour = r.colour();
      out += fmt::format(
          "<polyline class=\"roof\" data-level=\"{}\"{} data-ceiling=\"{}\" data-source=\"{}\" "
          "data-unit=\"{}\" data-bandwidth-GBps=\"{}\" data-peak-TFLOPs=\"{}\" data-ridge=\"{}\" "
          "points=\"{},{} {},{} {},{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
          r.level,
          r.of_instruction() ? fmt::format(" data-instruction=\"{}\"", attr(r.instruction)) : "",
          attr(r.ceiling), attr(r.source), to_string(r.unit), num(r.bandwidth_GBps),
          num(r.peak_TFLOPs), num(ridge), px(x_.to_pixel(x_start)),
          px(y_.to_pixel(x_start * slope)), px(x_.to_pixel(ridge)), px(y_.to_pixel(r.peak_TFLOPs)),
          px(x_.to_pixel(x_.max())), px(y_.to_pixel(r.peak_TFLOPs)), colour,
          r.measured() ? "2" : "1.5",
          r.of_instruction() ? " stroke-dasharray=\"2 3\""
          : r.measured()     ? ""
                             : " stroke-dasharray=\"7 4\"");
      out += fmt::format(
          "<circle class=\"ridge\" data-level=\"{}\" data-unit=\"{}\" data-ridge=\"{}\" "
          "data-tflops=\"{}\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{} ridge of {} {} "
          "({}): {} FLOP/byte</title></circle>\n",
          r.level, to_string(r.unit), num(ridge), num(r.peak_TFLOPs), px(x_.to_pixel(ridge)),
          px(y_.to_pixel(r.peak_TFLOPs)), colour, r.name(), attr(r.ceiling), to_string(r.unit),
          attr(r.source), readable(ridge));
      if (const auto& spot = roof_label_spots_[i]) {
        out += placed_label("roof-label", *spot, colour, roof_font, roof_label(r));
      }
      if (const auto& spot = slope_label_spots_[i]) {
        out += placed_label("bandwidth-label", *spot, colour, roof_font, slope_label(r));
      }
    }
    out += "</g>\n";
    return out;
  }

  std::string colour_of(const std::string& kernel) const {
    const auto it = std::find(kernels_.begin(), kernels_.end(), kernel);
    const auto index = static_cast<std::size_t>(it - kernels_.begin());
    return std::string(kernel_colours[index % kernel_colours.size()]);
  }

  // Causal: a triangle; not causal: a circle; `r` the head dim's size.
  static std::string shape(bool causal, double x, double y, std::string_view attributes,
                           double r = 5) {
    if (causal) {
      return fmt::format("<path {} d=\"M {} {} L {} {} L {} {} Z\"", attributes, px(x),
                         px(y - 1.3 * r), px(x + 1.2 * r), px(y + 0.8 * r), px(x - 1.2 * r),
                         px(y + 0.8 * r));
    }
    return fmt::format("<circle {} cx=\"{}\" cy=\"{}\" r=\"{}\"", attributes, px(x), px(y), r);
  }

  // The model's AI interval: a bar from AI low to AI high at the marker's
  // TFLOP/s, with end caps.
  std::string render_interval(const Marker& m, const std::string& colour) const {
    if (!m.ai_low || !m.ai_high) return "";
    const double y = y_.to_pixel(m.tflops);
    const double x1 = x_.to_pixel(*m.ai_low);
    const double x2 = x_.to_pixel(*m.ai_high);
    return fmt::format(
        "<path class=\"ai-interval\" data-row=\"{}\" data-ai-low=\"{}\" data-ai-high=\"{}\" "
        "d=\"M {} {} L {} {} M {} {} L {} {} M {} {} L {} {}\" stroke=\"{}\" stroke-width=\"1.2\" "
        "fill=\"none\"><title>{}: the L2-aware model's AI from {} to {} FLOP/byte</title></path>\n",
        m.row_id, num(*m.ai_low), num(*m.ai_high), px(x1), px(y), px(x2), px(y), px(x1), px(y - 4),
        px(x1), px(y + 4), px(x2), px(y - 4), px(x2), px(y + 4), colour, attr(row_label(*m.row)),
        readable(*m.ai_low), readable(*m.ai_high));
  }

  // A profiled row's measured points: DRAM a filled square, L2 a hollow one,
  // at the row's TFLOP/s, tied to each other by a line.
  std::string render_levels(const Marker& m, const std::string& colour) const {
    if (!m.ai_dram && !m.ai_l2) return "";
    std::string out;
    const double y = y_.to_pixel(m.tflops);
    if (m.ai_dram && m.ai_l2) {
      out += fmt::format(
          "<line class=\"level-tie\" data-kernel=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" "
          "y2=\"{}\" stroke=\"{}\" stroke-width=\"1\" stroke-dasharray=\"2 2\"/>\n",
          attr(m.row->kernel), px(x_.to_pixel(*m.ai_dram)), px(y), px(x_.to_pixel(*m.ai_l2)), px(y),
          colour);
    }
    const double half = marker_radius(m.row->problem.head_dim) * 0.8;
    for (const auto& [level, ai] : {std::pair{"dram", m.ai_dram}, std::pair{"l2", m.ai_l2}}) {
      if (!ai) continue;
      const double x = x_.to_pixel(*ai);
      out += fmt::format(
          "<rect class=\"level-point\" data-level=\"{}\" data-kernel=\"{}\" data-seq-len=\"{}\" "
          "data-head-dim=\"{}\" data-causal=\"{}\" data-ai=\"{}\" data-tflops=\"{}\" x=\"{}\" "
          "y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.4\">"
          "<title>{}: {} TFLOP/s at {} FLOP/byte of measured {} bytes</title></rect>\n",
          level, attr(m.row->kernel), m.row->problem.seq_len, m.row->problem.head_dim,
          m.row->problem.causal ? "true" : "false", num(*ai), num(m.tflops), px(x - half),
          px(y - half), px(2 * half), px(2 * half),
          std::string_view(level) == "dram" ? colour : "white", colour, attr(row_label(*m.row)),
          readable(m.tflops), readable(*ai), std::string_view(level) == "dram" ? "DRAM" : "L2");
    }
    return out;
  }

  std::string render_markers() const {
    std::string out = "<g class=\"points\">\n";
    for (std::size_t i = 0; i < markers_.size(); ++i) {
      const Marker& m = markers_[i];
      const ResultRow& row = *m.row;
      const double x = x_.to_pixel(m.ai);
      const double y = y_.to_pixel(m.tflops);
      const std::string colour = m.model ? std::string(model_gray) : colour_of(row.kernel);
      const bool hollow = m.model || !m.auditable;
      const std::string attributes = fmt::format(
          "class=\"{}\" data-row=\"{}\" data-report=\"{}\" data-kernel=\"{}\" data-dtype=\"{}\" "
          "data-seq-len=\"{}\" data-head-dim=\"{}\" data-causal=\"{}\" data-auditable=\"{}\" "
          "data-ai=\"{}\" data-tflops=\"{}\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.6\"",
          m.model ? "model-point" : "point", m.row_id, attr(m.report), attr(row.kernel),
          to_string(row.problem.dtype), row.problem.seq_len, row.problem.head_dim,
          row.problem.causal ? "true" : "false", m.auditable ? "true" : "false", num(m.ai),
          num(m.tflops), hollow ? "white" : colour, colour);
      out += render_levels(m, colour);
      out += render_interval(m, colour);
      out += shape(row.problem.causal, x, y, attributes, marker_radius(row.problem.head_dim));
      out += fmt::format("><title>{}: {} TFLOP/s at {} FLOP/byte{} ({})</title>{}\n",
                         attr(row_label(row)), readable(m.tflops), readable(m.ai),
                         m.model ? ", model roof" : (m.auditable ? "" : ", unauditable"),
                         attr(m.report), row.problem.causal ? "</path>" : "</circle>");
      if (const auto& spot = point_label_spots_[i]) {
        out += fmt::format(
            "<text class=\"point-label\" x=\"{}\" y=\"{}\" text-anchor=\"{}\" font-size=\"{}\" "
            "fill=\"{}\">{}</text>\n",
            px(spot->x), px(spot->y), anchor_name(spot->anchor), point_font,
            m.model ? model_gray : "#333", attr(point_label(m)));
      }
    }
    out += "</g>\n";
    return out;
  }

  // The legend; `bottom` is the baseline of its last line.
  std::string render_legend(double& bottom) const {
    std::string out = "<g class=\"legend\" font-size=\"11\">\n";
    double y = plot_top;
    const auto line = [&](const std::string& body) {
      out += body;
      y += 18;
    };
    line(fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Kernels</text>\n", legend_left,
                     px(y)));
    for (const std::string& kernel : kernels_) {
      line(fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
          "<text x=\"{}\" y=\"{}\">{}</text>\n",
          legend_left, px(y - 10), colour_of(kernel), legend_left + 18, px(y), attr(kernel)));
    }
    y += 8;
    line(fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Markers</text>\n", legend_left,
                     px(y)));
    line(shape(false, legend_left + 6, y - 4, "fill=\"#333\" stroke=\"#333\"") +
         fmt::format("/><text x=\"{}\" y=\"{}\">not causal</text>\n", legend_left + 18, px(y)));
    line(shape(true, legend_left + 6, y - 4, "fill=\"#333\" stroke=\"#333\"") +
         fmt::format("/><text x=\"{}\" y=\"{}\">causal</text>\n", legend_left + 18, px(y)));
    line(shape(false, legend_left + 6, y - 4, "fill=\"#333\" stroke=\"#333\"") +
         fmt::format("/><text x=\"{}\" y=\"{}\">filled: auditable measurement</text>\n",
                     legend_left + 18, px(y)));
    line(shape(false, legend_left + 6, y - 4,
               "fill=\"white\" stroke=\"#333\" stroke-width=\"1.6\"") +
         fmt::format("/><text x=\"{}\" y=\"{}\">hollow: unauditable, not evidence</text>\n",
                     legend_left + 18, px(y)));
    line(shape(false, legend_left + 6, y - 4,
               fmt::format("fill=\"white\" stroke=\"{}\" stroke-width=\"1.6\"", model_gray)) +
         fmt::format("/><text x=\"{}\" y=\"{}\">gray: model projection at its roof</text>\n",
                     legend_left + 18, px(y)));
    line(fmt::format("<text x=\"{}\" y=\"{}\">label: sequence length N</text>\n", legend_left,
                     px(y)));
    for (const int d : {32, 64, 128}) {
      line(shape(false, legend_left + 7, y - 4, "fill=\"#333\" stroke=\"#333\"", marker_radius(d)) +
           fmt::format("/><text x=\"{}\" y=\"{}\">head dim {}</text>\n", legend_left + 18, px(y),
                       d));
    }
    if (hierarchical_) {
      line(
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"#333\"/>"
                      "<text x=\"{}\" y=\"{}\">measured DRAM bytes (ncu)</text>\n",
                      legend_left + 3, px(y - 8), legend_left + 18, px(y)));
      line(fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"white\" stroke=\"#333\"/>"
          "<text x=\"{}\" y=\"{}\">measured L2 bytes, tied to DRAM</text>\n",
          legend_left + 3, px(y - 8), legend_left + 18, px(y)));
    }
    y += 8;
    line(fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Roofs</text>\n", legend_left,
                     px(y)));
    line(
        fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#555555\" "
                    "stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>"
                    "<text x=\"{3}\" y=\"{4}\">datasheet ceiling</text>\n",
                    legend_left, px(y - 4), legend_left + 14, legend_left + 18, px(y)));
    line(
        fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\" "
                    "stroke-width=\"2\"/><text x=\"{3}\" y=\"{4}\">measured ceiling</text>\n",
                    legend_left, px(y - 4), legend_left + 14, legend_left + 18, px(y)));
    line(
        fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"#555555\"/>"
                    "<text x=\"{}\" y=\"{}\">ridge point</text>\n",
                    legend_left + 7, px(y - 4), legend_left + 18, px(y)));
    if (hierarchical_) {
      line(
          fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
                      "stroke-width=\"2\"/><text x=\"{4}\" y=\"{5}\">L2 bandwidth roof</text>\n",
                      legend_left, px(y - 4), legend_left + 14, l2_blue, legend_left + 18, px(y)));
    }
    if (std::any_of(roofs_.begin(), roofs_.end(),
                    [](const Roof& r) { return r.of_instruction(); })) {
      line(fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
          "stroke-width=\"2\" stroke-dasharray=\"2 3\"/><text x=\"{4}\" y=\"{5}\">the "
          "kernel's instruction's roof</text>\n",
          legend_left, px(y - 4), legend_left + 14, instruction_purple, legend_left + 18, px(y)));
    }
    if (std::any_of(markers_.begin(), markers_.end(), [](const Marker& m) { return m.ai_low; })) {
      line(fmt::format(
          "<path d=\"M {0} {1} L {2} {1} M {0} {3} L {0} {4} M {2} {3} L {2} {4}\" "
          "stroke=\"#333\" stroke-width=\"1.2\"/><text x=\"{5}\" y=\"{6}\">the L2-aware "
          "model's AI interval</text>\n",
          legend_left, px(y - 4), legend_left + 14, px(y - 8), px(y), legend_left + 18, px(y)));
    }
    if (std::any_of(roofs_.begin(), roofs_.end(), [](const Roof& r) { return r.read(); })) {
      line(fmt::format(
          "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
          "stroke-width=\"2\"/><text x=\"{4}\" y=\"{5}\">DRAM read roof (read-stream "
          "kernels)</text>\n",
          legend_left, px(y - 4), legend_left + 14, read_teal, legend_left + 18, px(y)));
    }
    // Every roof, whether or not its label found room on the plot.
    y += 8;
    line(
        fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">Roofs, TFLOP/s and "
                    "ridge FLOP/B</text>\n",
                    legend_left, px(y)));
    for (std::size_t i = 0; i < roofs_.size(); ++i) {
      const Roof& r = roofs_[i];
      if (!slope_labelled_before(i)) {
        line(fmt::format(
            "<text class=\"legend-roof\" x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>\n",
            legend_left, px(y), attr(slope_label(r))));
      }
      line(fmt::format(
          "<text class=\"legend-roof\" x=\"{}\" y=\"{}\" font-size=\"10\">  {} {}{}, ridge {} "
          "({})</text>\n",
          legend_left, px(y), r.of_instruction() ? r.instruction : std::string(to_string(r.unit)),
          r.l2()     ? "L2 "
          : r.read() ? "read "
                     : "",
          readable(r.peak_TFLOPs), readable(r.ridge()), attr(r.source)));
    }
    out += "</g>\n";
    bottom = y;
    return out;
  }

  const std::vector<PlotReport>& reports_;
  const PlotOptions& options_;
  const Figure& x_figure_;
  const Figure& y_figure_;
  const Figure& roof_figure_;  // where a model projection is drawn
  std::vector<Marker> markers_;
  bool several_gpus_ = false;         // reports of several GPUs: labels name the GPU
  std::vector<std::string> kernels_;  // colour order
  std::vector<Roof> roofs_;
  bool hierarchical_ = false;  // some row has a measured L2 point: L2 roofs are drawn
  LogAxis x_;
  LogAxis y_;
  std::vector<std::optional<LabelSpot>> roof_label_spots_;   // per roof
  std::vector<std::optional<LabelSpot>> slope_label_spots_;  // per roof; empty: labelled before
  std::vector<std::optional<LabelSpot>> point_label_spots_;  // per marker
};

}  // namespace

std::string roofline_svg(const std::vector<PlotReport>& reports, const PlotOptions& options,
                         PlotSummary* summary) {
  return Chart(reports, options).render(summary);
}

}  // namespace cfr::evidence
