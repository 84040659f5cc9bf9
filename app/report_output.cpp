#include "report_output.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

#include "report_file.hpp"
#include "roofline/report_json.hpp"
#include "roofline/report_table.hpp"

namespace cfr::app {

std::string report_text(const Report& report) {
  return to_json(report).dump(2) + "\n";
}

void emit_report(const Report& report, const SweepOptions& options) {
  const bool stdout_taken =
      options.json_path == "-" || options.csv_path == "-" || options.md_path == "-";
  std::ostream& screen = stdout_taken ? std::cerr : std::cout;
  screen << render_table(report, TableFormat::text) << '\n' << render_legend(report) << std::flush;
  if (!options.json_path.empty()) write_text_atomically(options.json_path, report_text(report));
  if (!options.csv_path.empty()) {
    write_text_atomically(options.csv_path, render_table(report, TableFormat::csv));
  }
  if (!options.md_path.empty()) {
    write_text_atomically(options.md_path, render_table(report, TableFormat::markdown) + "\n" +
                                               render_legend(report));
  }
}

}  // namespace cfr::app
