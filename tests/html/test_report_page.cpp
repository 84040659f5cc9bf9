#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "../evidence/sample_reports.hpp"
#include "page_reading.hpp"
#include "roofline/html/page_assets.hpp"
#include "roofline/html/report_page.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_table.hpp"
#include "tests/source_text.hpp"

using namespace cfr;
using namespace cfr::html;

namespace {

std::string page_of(const std::vector<std::pair<std::string, const Report*>>& reports) {
  std::vector<PageReport> pages;
  for (const auto& [name, report] : reports) pages.push_back({name, report});
  return report_page(pages, {"", "cuflash-roofline test"});
}

std::vector<const XmlElement*> with_class(const XmlElement& root, std::string_view name) {
  return find_all(root, [&](const XmlElement& e) { return e.has_class(name); });
}

const XmlElement* by_id(const XmlElement& root, const std::string& id) {
  const auto found = find_all(root, [&](const XmlElement& e) {
    return e.attributes.count("id") != 0 && e.attribute("id") == id;
  });
  return found.size() == 1 ? found.front() : nullptr;
}

std::vector<std::string> cells_of(const XmlElement& row) {
  std::vector<std::string> cells;
  for (const XmlElement& cell : row.children) cells.push_back(all_text(cell));
  return cells;
}

std::size_t ok_rows_with_achieved(const Report& report) {
  return static_cast<std::size_t>(
      std::count_if(report.results.begin(), report.results.end(), [](const ResultRow& r) {
        return r.status == RowStatus::ok && r.achieved && r.achieved->TFLOPs > 0;
      }));
}

Report committed_report(const std::string& relative) {
  return report_from_json(
      nlohmann::json::parse(cfr::test::read_source_text(source_path(relative))));
}

}  // namespace

// The page's contract (report_page.hpp): one point per drawn row, linked by
// data-row to the table row holding that row's cells as `table` prints them.
TEST_CASE("every point links to the table row of its report row, whose cells are table's") {
  const Report report = measured_report();
  const XmlElement page = parse_page(page_of({{"sweep.json", &report}}));
  const auto points = with_class(page, "point");
  REQUIRE(points.size() == ok_rows_with_achieved(report));
  const TableCells expected = table_cells(report, TableFormat::text);
  for (const XmlElement* point : points) {
    const std::string id = point->attribute("data-row");
    REQUIRE(id.starts_with("0-"));
    const std::size_t index = std::stoul(id.substr(2));
    const XmlElement* row = by_id(page, "row-" + id);
    REQUIRE(row != nullptr);
    CHECK(row->attribute("data-status") == "ok");
    CHECK(cells_of(*row) == expected.rows[index]);
    CHECK(point->attribute("data-kernel") == report.results[index].kernel);
  }
  // Every row is in the table, the skipped one too, under the descriptors' headers.
  const XmlElement* table = by_id(page, "table-0");
  REQUIRE(table != nullptr);
  const auto headers = find_all(*table, [](const XmlElement& e) { return e.name == "th"; });
  REQUIRE(headers.size() == expected.headers.size());
  for (std::size_t c = 0; c < headers.size(); ++c) {
    CHECK(headers[c]->attribute("data-label") == expected.headers[c]);
  }
  const auto rows = find_all(*table, [](const XmlElement& e) { return e.name == "tr"; });
  CHECK(rows.size() == report.results.size() + 1);  // and the header row
}

TEST_CASE("the page loads nothing: a policy that refuses every load, no address to load") {
  const Report report = measured_report();
  const std::string page = page_of({{"sweep.json", &report}});
  const std::string policy =
      std::string("<meta http-equiv=\"Content-Security-Policy\" content=\"") +
      std::string(content_security_policy) + "\"/>";
  // First in <head> after the charset, before the style and script it governs.
  CHECK(page.find(policy) < page.find("<style>"));
  CHECK(page.find("default-src 'none'") != std::string::npos);
  for (const char* load : {" src=", " href=", "url(", "@import", "https:", "<link", "<img",
                           "<iframe", "fetch(", "XMLHttpRequest"}) {
    INFO(load);
    CHECK(page.find(load) == std::string::npos);
  }
  // The one http: address is the SVG's namespace name, which is never fetched.
  CHECK(occurrences(page, "http:") == occurrences(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  // The inline script and style cannot end their own elements early.
  CHECK(page_script().find("</") == std::string_view::npos);
  CHECK(page_style().find("</") == std::string_view::npos);
  CHECK(occurrences(page, "<script>") == 1);
}

TEST_CASE("hostile text in a report shows as text: names, reasons, plugins, peers' software") {
  Report report = measured_report();
  const std::string kernel = "</script><script>alert(1)</script>&amp;\"'<b>";
  report.results[0].kernel = kernel + "\x01";
  report.ceiling.gpu_name = "<img src=x onerror=alert(2)>";
  report.devices[0].driver = "580 & <i>up</i>";
  report.provenance.reasons = {"<!-- a comment --> ]]> </style>"};
  report.provenance.command = "sweep --json '\"a\"' \x1b[31m";
  report.provenance.plugins = {{kernel, "1<2", "/tmp/<p>.so", "&#x27;"}};
  report.provenance.environment = {{"<torch>",
                                    "2.11\xe2\x80\xa8"
                                    "0"}};
  const std::string page = page_of({{"<x>&.json", &report}});
  // No markup came from the report: one script element, no injected element.
  CHECK(occurrences(page, "<script") == 1);
  CHECK(occurrences(page, "</style") == 1);
  for (const char* injected : {"<b>", "<i>", "<img", "<!--", "<p>.so", "<torch>"}) {
    INFO(injected);
    CHECK(page.find(injected) == std::string::npos);
  }
  const XmlElement parsed = parse_page(page);  // well-formed with the hostile text in it
  const std::string text = all_text(parsed);
  CHECK(text.find(kernel + "\\x01") != std::string::npos);  // the table shows \x01
  CHECK(text.find("<img src=x onerror=alert(2)>") != std::string::npos);
  CHECK(text.find("580 & <i>up</i>") != std::string::npos);
  CHECK(text.find("<!-- a comment --> ]]> </style>") != std::string::npos);
  CHECK(text.find("/tmp/<p>.so") != std::string::npos);
  CHECK(text.find("<x>&.json") != std::string::npos);
  const auto points = with_class(parsed, "point");
  CHECK(std::any_of(points.begin(), points.end(), [&](const XmlElement* p) {
    return p->attribute("data-kernel") == kernel + "?";  // the chart's escape: ? for \x01
  }));
}

TEST_CASE("the audit made with the page: consistent, or the failing findings listed first") {
  Report report = measured_report();
  const XmlElement clean = parse_page(page_of({{"sweep.json", &report}}));
  const auto verdicts = with_class(clean, "audit-verdict");
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0]->attribute("data-consistent") == "true");
  CHECK(verdicts[0]->text.starts_with("Consistent: "));
  report.results[0].achieved->TFLOPs *= 2;  // an edit audit must find
  const XmlElement tampered = parse_page(page_of({{"sweep.json", &report}}));
  const auto verdict = with_class(tampered, "audit-verdict");
  REQUIRE(verdict.size() == 1);
  CHECK(verdict[0]->attribute("data-consistent") == "false");
  CHECK(verdict[0]->text.starts_with("INCONSISTENT: "));
  const auto findings = with_class(tampered, "finding");
  REQUIRE_FALSE(findings.empty());
  CHECK(findings.front()->has_class("mismatch"));
  CHECK(all_text(*findings.front()).find("TFLOPs") != std::string::npos);
}

TEST_CASE("measured ceilings given are drawn beside the report's own and named, escaped") {
  const Report report = measured_report();
  PageOptions options{"", "test", {}, {}};
  CeilingRecord measured = report.ceiling;
  measured.source = "measured";
  measured.source_detail = "<ceilings>.json";
  measured.bandwidth_GBps *= 0.85;
  options.extra_ceilings = {measured};
  const XmlElement page = parse_page(report_page({{"sweep.json", &report}}, options));
  const auto roofs = with_class(page, "roof");
  const auto measured_roofs = std::count_if(roofs.begin(), roofs.end(), [](const XmlElement* r) {
    return r->attribute("data-source") == "measured";
  });
  CHECK(measured_roofs == 2);  // the report's two units, under the measured bandwidth
  CHECK(static_cast<std::size_t>(measured_roofs) * 2 == roofs.size());
  const auto named = with_class(page, "measured-ceiling");
  REQUIRE(named.size() == 1);
  CHECK(named[0]->text.find("<ceilings>.json") != std::string::npos);
}

TEST_CASE("provenance: tool commit, device and driver, auditable and its reasons") {
  Report report = measured_report();
  report.provenance.auditable = false;
  report.provenance.reasons = {"dirty tree", "clock locked by hand"};
  const XmlElement page = parse_page(page_of({{"sweep.json", &report}}));
  const auto blocks = find_all(page, [](const XmlElement& e) { return e.has_class("provenance"); });
  REQUIRE(blocks.size() == 1);
  const std::string text = all_text(*blocks[0]);
  for (const std::string& expected :
       {report.tool.git_commit, std::string("NVIDIA H200"), std::string("driver 580.65"),
        std::string("dirty tree"), std::string("clock locked by hand"), report.provenance.command,
        std::string("4800 GB/s")}) {
    INFO(expected);
    CHECK(text.find(expected) != std::string::npos);
  }
  CHECK(with_class(page, "auditable-no").size() == 1);
}

TEST_CASE("two reports: a verdict per configuration; a refused comparison says why") {
  const Report base = measured_report();
  Report slower = measured_report();
  scale_row_time(slower, 0, 1.5);
  const XmlElement page = parse_page(page_of({{"base.json", &base}, {"new.json", &slower}}));
  const XmlElement* table = by_id(page, "comparison-table");
  REQUIRE(table != nullptr);
  const auto rows = find_all(*table, [](const XmlElement& e) { return e.name == "tr"; });
  std::size_t same = 0;
  std::size_t slower_rows = 0;
  for (const XmlElement* row : rows) {
    if (row->attributes.count("data-status") == 0) continue;  // the header
    same += row->attribute("data-status") == "SAME";
    slower_rows += row->attribute("data-status") == "SLOWER";
  }
  CHECK(slower_rows == 1);
  CHECK(same == ok_rows_with_achieved(base) - 1);
  // Points of both reports, each linked to its own report's table.
  CHECK(with_class(page, "point").size() == 2 * ok_rows_with_achieved(base));
  CHECK(by_id(page, "row-1-0") != nullptr);

  const Report model = model_report();  // not auditable: compare refuses it as a base
  const XmlElement refused = parse_page(page_of({{"model.json", &model}, {"new.json", &base}}));
  const auto reasons = with_class(refused, "not-compared");
  REQUIRE(reasons.size() == 1);
  CHECK(reasons[0]->text.find("Not compared: ") == 0);
  CHECK(by_id(refused, "comparison-table") == nullptr);

  Report other_axes = measured_report();
  for (ResultRow& row : other_axes.results) row.problem.heads *= 2;
  const XmlElement disjoint =
      parse_page(page_of({{"base.json", &base}, {"other.json", &other_axes}}));
  const auto disjoint_reasons = with_class(disjoint, "not-compared");
  REQUIRE(disjoint_reasons.size() == 1);
  CHECK(disjoint_reasons[0]->text == "Not compared: no configuration is in both reports");
}

TEST_CASE("two reports by shape: every pairing of a shape, a mean per pairing, as compare") {
  // Each shape of the sample has an fa1_scalar and an fa1_wmma row on either side.
  const Report base = measured_report();
  const Report next = measured_report();
  for (const bool fastest : {false, true}) {
    INFO((fastest ? "--by fastest" : "--by shape"));
    PageOptions options{"", "test", {}, {}};
    options.compare.by_shape = true;
    options.compare.fastest_base = fastest;
    const evidence::Comparison expected = evidence::compare_reports(base, next, options.compare);
    const XmlElement page =
        parse_page(report_page({{"base.json", &base}, {"new.json", &next}}, options));
    const XmlElement* table = by_id(page, "comparison-table");
    REQUIRE(table != nullptr);
    const auto rows = find_all(*table, [](const XmlElement& e) { return e.name == "tr"; });
    CHECK(rows.size() == expected.rows.size() + 1);  // and the header row
    CHECK(with_class(page, "pairing-mean").size() ==
          evidence::geometric_means_by_pairing(expected).size());
    CHECK(with_class(page, "slower-base-rows").size() == (fastest ? 1 : 0));
  }
  // By kernel name, each row meets its own kernel only.
  const XmlElement by_kernel = parse_page(page_of({{"base.json", &base}, {"new.json", &next}}));
  const auto kernel_rows = find_all(*by_id(by_kernel, "comparison-table"),
                                    [](const XmlElement& e) { return e.name == "tr"; });
  CHECK(kernel_rows.size() == evidence::compare_reports(base, next, {}).rows.size() + 1);
  CHECK(with_class(by_kernel, "pairing-mean").empty());
}

TEST_CASE("a report with nothing to draw still makes a page: its rows, no chart, the reason") {
  Report report = measured_report();
  for (ResultRow& row : report.results) {
    row.status = RowStatus::skipped;
    row.reason = "not measured";
  }
  const XmlElement page = parse_page(page_of({{"skipped.json", &report}}));
  CHECK(find_all(page, [](const XmlElement& e) { return e.name == "svg"; }).empty());
  CHECK(all_text(*by_id(page, "chart")).find("No row to draw") != std::string::npos);
  const auto rows = find_all(*by_id(page, "table-0"), [](const XmlElement& e) {
    return e.attributes.count("data-status") != 0 && e.attribute("data-status") == "skipped";
  });
  CHECK(rows.size() == report.results.size());
}

TEST_CASE("a default sweep's page is well under 2 MB: figures, not raw samples") {
  // results/h200/sweep-causal.json: 50 rows, 3.7 MB of JSON, most of it samples.
  const Report report = committed_report("results/h200/sweep-causal.json");
  const std::string page = page_of({{"sweep-causal.json", &report}});
  CHECK(page.size() < std::size_t{512} << 10);
  const XmlElement parsed = parse_page(page);
  CHECK(with_class(parsed, "point").size() == ok_rows_with_achieved(report));
  // A raw sample of the first timed row, at the precision the JSON holds it, is not on the page.
  const auto timed = std::find_if(report.results.begin(), report.results.end(),
                                  [](const ResultRow& r) { return r.timing.has_value(); });
  REQUIRE(timed != report.results.end());
  CHECK(page.find(nlohmann::json(timed->timing->samples_ms.front()).dump()) == std::string::npos);
}
