#include "report_output.hpp"

#include <iostream>

#include <nlohmann/json.hpp>

#include "report_file.hpp"
#include "roofline/html/report_page.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_table.hpp"
#include "tool_info.hpp"

namespace cfr::app {

std::string report_text(const Report& report) {
  return json_text(to_json(report));
}

OutputFiles report_outputs(const SweepOptions& options, const std::vector<std::string>& inputs) {
  OutputFiles outputs;
  outputs.protect_input(options.gpu_table);
  for (const std::string& input : inputs) outputs.protect_input(input);
  outputs.add("--json", options.json_path);
  outputs.add("--csv", options.csv_path);
  outputs.add("--md", options.md_path);
  outputs.add("--html", options.html_path);
  return outputs;
}

void emit_report(const Report& report, const OutputFiles& outputs) {
  std::vector<OutputFiles::Content> contents;
  if (outputs.has("--json")) contents.push_back({"--json", report_text(report)});
  if (outputs.has("--csv")) contents.push_back({"--csv", render_table(report, TableFormat::csv)});
  if (outputs.has("--md")) {
    contents.push_back(
        {"--md", render_table(report, TableFormat::markdown) + "\n" + render_legend(report)});
  }
  if (outputs.has("--html")) {
    // The page names the report by the file it was written to, when there is one.
    const std::string name = outputs.has("--json") ? outputs.path("--json") : "this run";
    contents.push_back({"--html", html::report_page({{name, &report}}, {"", generator_name()})});
  }
  // The files first: when one cannot be written, nothing but the error is printed.
  outputs.write(contents);
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  screen << render_table(report, TableFormat::text) << '\n' << render_legend(report) << std::flush;
}

}  // namespace cfr::app
