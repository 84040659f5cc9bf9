#include "html_table.hpp"

#include <fmt/format.h>

#include "roofline/evidence/xml_text.hpp"

namespace cfr::html {

namespace {

using evidence::xml_escape;

std::string optional_attribute(std::string_view name, const std::string& value) {
  return value.empty() ? std::string() : fmt::format(" {}=\"{}\"", name, xml_escape(value));
}

std::string render_row(const HtmlRow& row) {
  std::string out = fmt::format("<tr{}{}{}>", optional_attribute("id", row.id),
                                optional_attribute("data-row", row.data_row),
                                optional_attribute("data-status", row.status));
  for (const std::string& cell : row.cells) out += "<td>" + xml_escape(cell) + "</td>";
  return out + "</tr>\n";
}

}  // namespace

std::string render_html_table(const HtmlTable& table) {
  std::string out =
      fmt::format("<div class=\"table-wrap\"><table class=\"sortable\"{}>\n<caption>{}</caption>\n",
                  optional_attribute("id", table.id), xml_escape(table.caption));
  out += "<thead><tr>";
  for (const std::string& header : table.headers) {
    // A button: sortable by keyboard as well as by click.
    out += fmt::format(
        "<th scope=\"col\" data-label=\"{0}\"><button type=\"button\">{0}</button></th>",
        xml_escape(header));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const HtmlRow& row : table.rows) out += render_row(row);
  return out + "</tbody>\n</table></div>\n";
}

}  // namespace cfr::html
