#pragma once

// Renders a report's rows as a text table, Markdown or CSV. The columns are
// defined once (report_table.cpp); every format prints the same figures.

#include <string>

#include "report.hpp"

namespace cfr {

enum class TableFormat { text, markdown, csv };

std::string render_table(const Report& report, TableFormat format);

// The lines under a table that say where each number came from.
std::string render_legend(const Report& report);

}  // namespace cfr
