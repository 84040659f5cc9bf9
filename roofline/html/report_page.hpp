#pragma once

// `report --html`: one self-contained HTML page of one or more reports (issue
// 24). It holds, with no network resource (inline style, script and SVG; a
// Content-Security-Policy that refuses any load):
//   - the roofline chart (roofline_svg) with the reports' ceilings and any
//     measured ones given, each point focusable, its figures
//     shown on hover or focus, a click or Enter selecting its table row;
//   - per report its provenance (tool commit, devices, driver, ceiling,
//     command), `auditable` and its reasons, the result of `audit` run when
//     the page was made, and the rows as `table` prints them (its compact
//     set; the wide set folded), each table sortable by its headers;
//   - for two reports, `compare` of the first (base) against the second.
// Every string from a report is escaped: text is data, never markup. The
// page without its <script> and <style> is well-formed XML.
//
// Elements the page's script and the browser test find it by:
//   <svg> points:  class="point" | "model-point", data-row="R-I"
//   <tr id="row-R-I" data-row="R-I" data-status>  row I of report R
//   <p id="script-status" data-state="ok|error">  what the script met
//   <p id="selftest" data-state>  with #selftest: every point selected in turn

#include <string>
#include <vector>

#include "roofline/evidence/compare.hpp"
#include "roofline/report/report.hpp"

namespace cfr::html {

struct PageReport {
  std::string name;  // the file, as the user named it
  const Report* report = nullptr;
};

struct PageOptions {
  std::string title;      // empty: "cuflash-roofline report: " + the names
  std::string generator;  // the tool that made the page: "cuflash-roofline 0.1.0 (commit)"
  // How two reports are compared: by kernel name (the default), or by shape
  // (`compare --by shape`, `--by fastest`: ours over a peer's, per shape).
  evidence::CompareOptions compare{};
  // Measured roofs drawn beside the reports' own (a `ceilings` file, as
  // plot --ceilings draws it); named under the chart by source_detail.
  std::vector<CeilingRecord> extra_ceilings{};
};

// Pure: audits and compares the reports itself (audit_report, and
// compare_reports with options.compare).
std::string report_page(const std::vector<PageReport>& reports, const PageOptions& options);

}  // namespace cfr::html
