// `cuflash-roofline table REPORT`: the table of a saved report, as the sweep
// printed it or with chosen columns, in text, Markdown or CSV. This is how the
// README's results table is made from the committed JSON. Exit 0; 2 for an
// unusable file or an unknown column.
#include <cctype>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "report_file.hpp"
#include "roofline/core/axis_values.hpp"
#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report_table.hpp"

namespace cfr::app {

namespace {

struct TableOptions {
  std::string file;
  std::string format = "text";
  std::string columns_list;  // as typed: "kernel, N"; blanks around names are dropped
  std::vector<std::string> columns;
  std::string status;
  bool no_legend = false;
  // --format's transform makes "CSV" "csv".
  TableFormat table_format() const {
    return format == "md"    ? TableFormat::markdown
           : format == "csv" ? TableFormat::csv
                             : TableFormat::text;
  }
};

// A ceilings file has figures, not rows: its one table, as `ceilings`
// printed it.
void print_ceilings(const CeilingsReport& ceilings, const TableOptions& options) {
  if (options.table_format() != TableFormat::text || !options.columns.empty() ||
      !options.status.empty()) {
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
    out = render_table(report, options.table_format(), options.columns);
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(fmt::format("--columns: {}", error.what()));
  }
  if (!options.no_legend && options.table_format() != TableFormat::csv) {
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
  command->add_option("--format", options->format, "text, md or csv (default text)")
      ->type_name("FORMAT")
      ->transform([](std::string text) {
        for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return text;
      })
      ->check(CLI::IsMember({"text", "md", "csv"}).description(""));
  command
      ->add_option("--columns", options->columns_list,
                   fmt::format("columns to show, in order, comma-separated (default: all that "
                               "apply): {}",
                               fmt::join(table_column_names(), ", ")))
      ->type_name("LIST")
      ->check(not_empty());
  command
      ->add_option("--status", options->status, "only rows with this status: ok, skipped, failed")
      ->type_name("STATUS")
      ->check(CLI::IsMember({"ok", "skipped", "failed"}).description(""));
  command->add_flag("--no-legend", options->no_legend, "leave out the lines under the table");
  add_version_flag(*command);
  command->callback([options] {
    if (!options->columns_list.empty()) {
      for (std::string_view name : split_list(options->columns_list, "--columns")) {
        options->columns.emplace_back(name);
      }
    }
    run(*options);
  });
}

}  // namespace cfr::app
