#include "chart_reading.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

std::vector<const XmlElement*> ChartReading::with_class(std::string_view name) const {
  return find_all(root, [&](const XmlElement& e) { return e.has_class(name); });
}

ChartReading read_chart(const std::string& svg) {
  ChartReading chart{parse_xml(svg), {}, {}};
  const auto areas = chart.with_class("plot-area");
  REQUIRE(areas.size() == 1);
  const XmlElement& area = *areas[0];
  chart.x = {std::log10(area.number("data-x-min")), std::log10(area.number("data-x-max")),
             area.number("data-left"), area.number("data-right")};
  chart.y = {std::log10(area.number("data-y-min")), std::log10(area.number("data-y-max")),
             area.number("data-bottom"), area.number("data-top")};
  return chart;
}

std::vector<std::pair<double, double>> vertices(const XmlElement& polyline) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(polyline.attribute("points"));
  std::string pair;
  while (in >> pair) {
    const auto comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}
