// `cuflash-roofline figure-table` (hidden): the figure table of
// docs/report-schema.md, from the descriptors. docs/update-figure-table.sh
// runs it to regenerate the page's table. Exit 0.
#include <iostream>

#include "commands.hpp"
#include "roofline/report/figures_doc.hpp"

namespace cfr::app {

void add_figure_table_command(CLI::App& app) {
  CLI::App* command = app.add_subcommand(
      "figure-table", "print docs/report-schema.md's figure table (docs/update-figure-table.sh)");
  command->group("");  // hidden: it writes a page of the docs, not a result
  add_version_flag(*command);
  command->callback([] { std::cout << render_figures_doc(); });
}

}  // namespace cfr::app
