// `cuflash-roofline report REPORT… --html OUT.html`: one self-contained HTML
// page of the reports (roofline/html/report_page.hpp): the chart, the tables,
// the provenance, the audit made with the page, and for two reports their
// comparison (--by as in compare). A `ceilings` report among the files is
// drawn as measured roofs. Written like every output, through a temporary file and a
// rename. Exit 0; 2 for an unusable file or target.
#include <iostream>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "roofline/html/report_page.hpp"
#include "tool_info.hpp"

namespace cfr::app {

namespace {

struct ReportOptions {
  std::vector<std::string> files;
  std::string html;
  std::string title;
  std::string by = "kernel";
};

void run(const ReportOptions& options) {
  const OutputFiles outputs = evidence_outputs(options.files, {{"--html", options.html}});
  // A ceilings report among the files (report results/h200/*.json) is drawn
  // as measured roofs, as plot --ceilings draws it.
  const EvidenceFiles files = read_evidence_files(options.files);
  if (files.reports.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: a ceilings report; report needs at least one sweep or model report beside it",
        options.files.front()));
  }
  std::vector<html::PageReport> pages;
  for (std::size_t i = 0; i < files.reports.size(); ++i) {
    pages.push_back({files.report_paths[i], &files.reports[i]});
  }
  html::PageOptions page_options{options.title, generator_name(), {}};
  page_options.compare.by_shape = options.by == "shape" || options.by == "fastest";
  page_options.compare.fastest_base = options.by == "fastest";
  for (std::size_t i = 0; i < files.ceilings.size(); ++i) {
    page_options.extra_ceilings.push_back(
        measured_roof(files.ceilings[i], files.ceilings_paths[i]));
    name_like_reports(page_options.extra_ceilings.back(), files.reports);
  }
  const std::string page = html::report_page(pages, page_options);
  outputs.write({{"--html", page}});
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  for (const std::string& path : files.ceilings_paths) {
    screen << path << ": a ceilings report, drawn as measured roofs\n";
  }
  screen << fmt::format("wrote {}: {} report{}, {} bytes\n", options.html, pages.size(),
                        pages.size() == 1 ? "" : "s", page.size());
}

}  // namespace

void add_report_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "write one self-contained HTML page of reports: chart, tables, provenance, audit, and the "
      "comparison of two");
  add_input_option(*command, "reports", options->files,
                   "report JSON files; a `ceilings` report among them is drawn as measured roofs")
      ->required();
  add_output_option(*command, "--html", options->html, "write the HTML page")->required();
  command->add_option("--title", options->title, "page title (default: the reports' names)")
      ->type_name("TEXT");
  command
      ->add_option("--by", options->by,
                   "how two reports' rows pair, as in compare: kernel (default), shape (ours "
                   "over a peer's, per shape) or fastest (over the fastest peer of each shape)")
      ->type_name("KEY")
      ->check(CLI::IsMember({"kernel", "shape", "fastest"}).description(""));
  add_version_flag(*command);
  command->callback([options, &status] {
    run(*options);
    status.exit_status = 0;
  });
}

}  // namespace cfr::app
