#pragma once

// Renders a report's rows as a text table, Markdown or CSV. The columns are
// defined once (report_table.cpp); every format prints the same figures.

#include <string>
#include <vector>

#include "report.hpp"

namespace cfr {

enum class TableFormat { text, markdown, csv };

// Every column, in the default order. Columns of measured figures are shown
// by default only when some row was measured.
std::vector<std::string> table_column_names();

// `columns` picks and orders the columns by name; empty means the default
// set. Throws std::invalid_argument naming an unknown column and the known ones.
std::string render_table(const Report& report, TableFormat format,
                         const std::vector<std::string>& columns = {});

// The lines under a table that say where each number came from.
std::string render_legend(const Report& report);

}  // namespace cfr
