#include "chart_frame.hpp"

#include <fmt/format.h>

#include "xml_text.hpp"

namespace cfr::evidence::chart {

std::string attr(std::string_view text) {
  return xml_escape(text);
}

std::string num(double x) {
  return fmt::format("{:.10g}", x);
}

std::string px(double x) {
  return fmt::format("{:.3f}", x);
}

std::string readable(double x) {
  if (x >= 100) return fmt::format("{:.0f}", x);
  if (x >= 10) return fmt::format("{:.1f}", x);
  if (x >= 1) return fmt::format("{:.2f}", x);
  return fmt::format("{:.3g}", x);
}

std::string_view anchor_name(Anchor anchor) {
  return anchor == Anchor::start ? "start" : anchor == Anchor::middle ? "middle" : "end";
}

std::string svg_head(double height, std::string_view title, std::string_view subtitle) {
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n",
      canvas_width, height);
  out += fmt::format("<title>{}</title>\n", attr(title));
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n",
                     canvas_width, height);
  out += fmt::format(
      "<text class=\"title\" x=\"{}\" y=\"30\" font-size=\"17\" "
      "font-weight=\"bold\">{}</text>\n",
      plot_left, attr(title));
  out += fmt::format("<text class=\"subtitle\" x=\"{}\" y=\"52\" fill=\"#444\">{}</text>\n",
                     plot_left, attr(subtitle));
  return out;
}

std::string placed_label(std::string_view css_class, const LabelSpot& spot, std::string_view colour,
                         double font_size, std::string_view text) {
  return fmt::format(
      "<text class=\"{}\" x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\" "
      "stroke=\"none\" font-size=\"{}\">{}</text>\n",
      css_class, px(spot.x), px(spot.y), anchor_name(spot.anchor), colour, font_size, attr(text));
}

std::string plot_area_open(const LogAxis& x, const LogAxis& y) {
  return fmt::format(
      "<g class=\"plot-area\" data-x-min=\"{}\" data-x-max=\"{}\" data-y-min=\"{}\" "
      "data-y-max=\"{}\" data-left=\"{}\" data-right=\"{}\" data-top=\"{}\" "
      "data-bottom=\"{}\">\n",
      num(x.min()), num(x.max()), num(y.min()), num(y.max()), plot_left, plot_right, plot_top,
      plot_bottom);
}

std::string render_grid(const LogAxis& x, const LogAxis& y, std::string_view x_label,
                        std::string_view y_label) {
  std::string out = "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (double v : x.minor_ticks()) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#f2f2f2\"/>\n",
                       px(x.to_pixel(v)), px(plot_top), px(plot_bottom));
  }
  for (double v : y.minor_ticks()) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#f2f2f2\"/>\n",
                       px(plot_left), px(y.to_pixel(v)), px(plot_right));
  }
  for (double v : x.decades()) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n", px(x.to_pixel(v)),
                       px(plot_top), px(plot_bottom));
  }
  for (double v : y.decades()) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n", px(plot_left),
                       px(y.to_pixel(v)), px(plot_right));
  }
  out += "</g>\n";
  out += fmt::format(
      "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#333\"/>\n",
      plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
  for (double v : x.decades()) {
    out += fmt::format(
        "<text class=\"tick-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
        px(x.to_pixel(v)), px(plot_bottom + 18), decade_label(v));
  }
  for (double v : y.decades()) {
    out += fmt::format(
        "<text class=\"tick-label y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        px(plot_left - 8), px(y.to_pixel(v) + 4), decade_label(v));
  }
  out += fmt::format(
      "<text class=\"axis-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
      px((plot_left + plot_right) / 2), px(plot_bottom + 45), attr(x_label));
  out += fmt::format(
      "<text class=\"axis-label y\" x=\"{0}\" y=\"{1}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 {0} {1})\">{2}</text>\n",
      px(plot_left - 55), px((plot_top + plot_bottom) / 2), attr(y_label));
  return out;
}

}  // namespace cfr::evidence::chart
