// `cuflash-roofline table REPORT`: the table of a saved report, as the sweep
// printed it or with chosen columns, in text, Markdown or CSV. This is how the
// README's results table is made from the committed JSON. Exit 0; 2 for an
// unusable file or an unknown column.
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "report_file.hpp"
#include "roofline/ceilings_report.hpp"
#include "roofline/report_table.hpp"

namespace cfr::app {

namespace {

struct TableOptions {
  std::string file;
  TableFormat format = TableFormat::text;
  std::vector<std::string> columns;
  std::string status;
  bool legend = true;
};

// A ceilings file has figures, not rows: its one table, as `ceilings`
// printed it.
void print_ceilings(const CeilingsReport& ceilings, const TableOptions& options) {
  if (options.format != TableFormat::text || !options.columns.empty() || !options.status.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: a ceilings report prints as one text table; --format, --columns and --status are "
        "for sweep reports",
        options.file));
  }
  std::cout << render_ceilings_table(ceilings);
}

void run(const TableOptions& options) {
  auto document = read_report_or_ceilings(options.file);
  if (const auto* ceilings = std::get_if<CeilingsReport>(&document)) {
    print_ceilings(*ceilings, options);
    return;
  }
  Report report = std::get<Report>(std::move(document));
  if (!options.status.empty()) {
    std::erase_if(report.results,
                  [&](const ResultRow& row) { return to_string(row.status) != options.status; });
  }
  std::string out;
  try {
    out = render_table(report, options.format, options.columns);
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(fmt::format("--columns: {}", error.what()));
  }
  if (options.legend && options.format != TableFormat::csv) {
    out += '\n';
    out += render_legend(report, options.columns);
  }
  std::cout << out;
}

}  // namespace

void add_table_command(CLI::App& app) {
  auto options = std::make_shared<TableOptions>();
  CLI::App* command = app.add_subcommand("table", "print the table of a saved report");
  command->add_option("report", options->file, "report JSON file")->required();
  const std::map<std::string, TableFormat> formats{
      {"text", TableFormat::text}, {"md", TableFormat::markdown}, {"csv", TableFormat::csv}};
  command->add_option("--format", options->format, "text, md or csv (default text)")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case));
  command
      ->add_option("--columns", options->columns,
                   fmt::format("columns to show, in order (default: all that apply): {}",
                               fmt::join(table_column_names(), ", ")))
      ->delimiter(',')
      ->check(not_empty());
  command->add_option("--status", options->status, "only rows with this status")
      ->check(CLI::IsMember({"ok", "skipped", "failed"}));
  command->add_flag("!--no-legend", options->legend, "leave out the lines under the table");
  add_version_flag(*command);
  command->callback([options] { run(*options); });
}

}  // namespace cfr::app
