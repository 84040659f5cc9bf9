#pragma once

// A sortable HTML table of text cells: every cell escaped (text is data,
// never markup), a header button per column that the page's script sorts
// by. Each row may carry an id and attributes for the script to find it by.

#include <string>
#include <vector>

namespace cfr::html {

struct HtmlRow {
  std::vector<std::string> cells{};
  std::string id{};        // empty: none
  std::string data_row{};  // "R-I", the chart's data-row of the same row; empty: none
  std::string status{};    // data-status: "ok", "failed", ...; a verdict for a comparison
};

struct HtmlTable {
  std::string id{};
  std::string caption{};
  std::vector<std::string> headers{};
  std::vector<HtmlRow> rows{};
};

std::string render_html_table(const HtmlTable& table);

}  // namespace cfr::html
