#include "report_page.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "html_table.hpp"
#include "page_assets.hpp"
#include "page_sections.hpp"
#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/evidence/xml_text.hpp"
#include "roofline/report/report_table.hpp"

namespace cfr::html {

namespace {

using evidence::xml_escape;

std::string page_title(const std::vector<PageReport>& reports, const PageOptions& options) {
  if (!options.title.empty()) return options.title;
  std::string names;
  for (const PageReport& r : reports) names += (names.empty() ? "" : ", ") + r.name;
  return "cuflash-roofline report: " + names;
}

// The SVG as an element of the page: without its XML declaration, which
// HTML does not have. The style sheet scales it to the page's width.
std::string chart_element(const std::vector<PageReport>& reports,
                          const std::vector<CeilingRecord>& extra_ceilings) {
  std::vector<evidence::PlotReport> plotted;
  for (const PageReport& r : reports) plotted.push_back({r.name, r.report});
  evidence::PlotOptions chart;
  chart.extra_ceilings = extra_ceilings;
  evidence::PlotSummary summary;
  std::string svg = evidence::roofline_svg(plotted, chart, &summary);
  if (summary.points + summary.model_points == 0) {
    return "<p>No row to draw: no row with status ok and an arithmetic intensity.</p>\n";
  }
  if (svg.starts_with("<?xml")) svg.erase(0, svg.find('\n') + 1);
  return svg;
}

// The rows as `table` prints them (its default, compact set), each with the
// id its chart point links to; the wide set folded below.
std::string rows_section(const Report& report, std::size_t report_index) {
  const TableCells compact = table_cells(report, TableFormat::text);
  HtmlTable table{.id = fmt::format("table-{}", report_index),
                  .caption = "Rows (the columns of `table`; click a header to sort)",
                  .headers = compact.headers,
                  .rows = {}};
  for (std::size_t i = 0; i < compact.rows.size(); ++i) {
    const std::string id = fmt::format("{}-{}", report_index, i);
    table.rows.push_back({.cells = compact.rows[i],
                          .id = "row-" + id,
                          .data_row = id,
                          .status = std::string(to_string(report.results[i].status))});
  }
  const TableCells wide = table_cells(report, TableFormat::text, {"wide"});
  HtmlTable wide_table{.id = fmt::format("wide-{}", report_index),
                       .caption = "Every column (`table --columns wide`)",
                       .headers = wide.headers,
                       .rows = {}};
  for (std::size_t i = 0; i < wide.rows.size(); ++i) {
    wide_table.rows.push_back(
        {.cells = wide.rows[i], .status = std::string(to_string(report.results[i].status))});
  }
  return render_html_table(table) + "<details><summary>Every column</summary>\n" +
         render_html_table(wide_table) + "</details>\n" +
         "<details><summary>Where each number comes from</summary>\n<pre class=\"legend\">" +
         xml_escape(render_legend(report)) + "</pre></details>\n";
}

std::string report_section(const PageReport& input, std::size_t index) {
  const Report& report = *input.report;
  std::string out = fmt::format("<section class=\"report\" id=\"report-{}\">\n<h2>{}</h2>\n", index,
                                xml_escape(input.name));
  out += provenance_section(report);
  out += audit_section(evidence::audit_report(report));
  out += rows_section(report, index);
  return out + "</section>\n";
}

std::string not_compared(std::string_view why) {
  return "<p class=\"not-compared\">Not compared: " + xml_escape(why) + "</p>\n</section>\n";
}

// `compare` of the first report (base) against the second (new), or why not:
// compare refused them, or no configuration is in both (a causal sweep and a
// non-causal one).
std::string comparison_part(const std::vector<PageReport>& reports,
                            const evidence::CompareOptions& options) {
  if (reports.size() != 2) return "";
  const std::string heading =
      fmt::format("<section id=\"comparison\">\n<h2>Comparison: {} (base) against {} (new)</h2>\n",
                  xml_escape(reports[0].name), xml_escape(reports[1].name));
  try {
    const evidence::Comparison comparison =
        evidence::compare_reports(*reports[0].report, *reports[1].report, options);
    if (comparison.rows.empty()) {
      return heading + not_compared("no configuration is in both reports");
    }
    return heading + comparison_section(comparison) + "</section>\n";
  } catch (const std::invalid_argument& refused) {
    return heading + not_compared(refused.what());
  }
}

}  // namespace

std::string report_page(const std::vector<PageReport>& reports, const PageOptions& options) {
  const std::string title = xml_escape(page_title(reports, options));
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\"/>\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
      "<meta name=\"generator\" content=\"{}\"/>\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n<header>\n<h1>{}</h1>\n",
      content_security_policy, xml_escape(options.generator), title, page_style(), title);
  out += fmt::format("<p class=\"made\">Made by {} from {} report{}.</p>\n",
                     xml_escape(options.generator), reports.size(), reports.size() == 1 ? "" : "s");
  out +=
      "<p id=\"script-status\" data-state=\"not-run\">The page's script has not run: the chart "
      "and tables are shown, but points cannot be selected and tables not sorted.</p>\n"
      "<p id=\"selftest\" data-state=\"not-run\"></p>\n</header>\n";
  out +=
      "<section id=\"chart-section\">\n<h2>Roofline</h2>\n<figure id=\"chart\" "
      "class=\"chart\">\n";
  out += chart_element(reports, options.extra_ceilings);
  out +=
      "<div id=\"tip\" role=\"status\" aria-live=\"polite\" hidden=\"hidden\"></div>\n"
      "<figcaption>Each point is a row: hover or focus it (Tab) for its figures, click it or "
      "press Enter to select its table row.</figcaption>\n</figure>\n";
  for (const CeilingRecord& ceiling : options.extra_ceilings) {
    out += "<p class=\"measured-ceiling\">Measured roofs drawn from " +
           xml_escape(ceiling.source_detail) + " (" +
           xml_escape(ceiling.gpu_name.empty() ? ceiling.gpu : ceiling.gpu_name) + ").</p>\n";
  }
  out += "</section>\n";
  for (std::size_t i = 0; i < reports.size(); ++i) out += report_section(reports[i], i);
  out += comparison_part(reports, options.compare);
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", page_script());
  return out;
}

}  // namespace cfr::html
