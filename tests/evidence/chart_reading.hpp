#pragma once

// Reads a chart of `plot` or `plot --energy` back for the SVG tests: the
// document parsed (which proves it well-formed), the axes rebuilt from the
// plot area's data attributes to map pixels back to data, and a polyline's
// vertices.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roofline/evidence/log_axis.hpp"
#include "xml_check.hpp"

struct ChartReading {
  XmlElement root;
  cfr::evidence::LogAxis x;
  cfr::evidence::LogAxis y;

  std::vector<const XmlElement*> with_class(std::string_view name) const;
};

ChartReading read_chart(const std::string& svg);

std::vector<std::pair<double, double>> vertices(const XmlElement& polyline);
