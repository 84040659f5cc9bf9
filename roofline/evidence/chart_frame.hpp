#pragma once

// The frame the charts of `plot` and `plot --energy` draw their data in: the
// canvas and its plot area, the kernels' palette, how numbers are written,
// the SVG's head, and the log-log grid with its tick and axis labels.

#include <array>
#include <string>
#include <string_view>

#include "label_placer.hpp"
#include "log_axis.hpp"

namespace cfr::evidence::chart {

// Canvas: the plot on the left, the legend on the right.
inline constexpr double canvas_width = 1000;
inline constexpr double default_canvas_height = 640;
inline constexpr double plot_left = 80;
inline constexpr double plot_right = 700;
inline constexpr double plot_top = 80;
inline constexpr double plot_bottom = 570;
inline constexpr double legend_left = 725;

// Tableau 10, minus gray: gray is for model projections.
inline constexpr std::array<std::string_view, 9> kernel_colours{"#1f77b4", "#d62728", "#2ca02c",
                                                                "#ff7f0e", "#9467bd", "#8c564b",
                                                                "#e377c2", "#bcbd22", "#17becf"};

// Text escaped for an attribute or element (xml_text.hpp).
std::string attr(std::string_view text);
// A data- attribute's number: exact to 10 digits.
std::string num(double x);
// A pixel coordinate.
std::string px(double x);
// A figure at sensible precision: three significant digits, no exponent.
std::string readable(double x);
// "start", "middle", "end"
std::string_view anchor_name(Anchor anchor);

// The document's opening: the <svg> element `height` tall, its <title>, a
// white background, the title and the subtitle lines.
std::string svg_head(double height, std::string_view title, std::string_view subtitle);

// A label at its placed spot: <text class="css_class" ...> in `colour`.
std::string placed_label(std::string_view css_class, const LabelSpot& spot, std::string_view colour,
                         double font_size, std::string_view text);

// The opening <g class="plot-area"> with the axes' ends and the plot's
// pixels as data- attributes (tests and scripts map pixels back with them).
std::string plot_area_open(const LogAxis& x, const LogAxis& y);

// The grid (decades and their 2..9 minor ticks), the frame, the decades'
// labels and the two axis labels.
std::string render_grid(const LogAxis& x, const LogAxis& y, std::string_view x_label,
                        std::string_view y_label);

}  // namespace cfr::evidence::chart
