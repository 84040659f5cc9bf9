#pragma once

// Renders a report's rows as a text table, Markdown or CSV: the row's
// configuration, one column per figure of the figure table (figures.hpp), its
// check and status. Every format prints the same cells.

#include <string>
#include <vector>

#include "roofline/report/report.hpp"

namespace cfr {

enum class TableFormat { text, markdown, csv };

// Every column, in the default order. Columns of measured figures are shown
// by default only when some row was measured.
std::vector<std::string> table_column_names();

// `columns` picks and orders the columns by name; empty means the default
// set. Throws std::invalid_argument naming an unknown column and the known ones.
std::string render_table(const Report& report, TableFormat format,
                         const std::vector<std::string>& columns = {});

// The cells render_table lays out, for a printer of its own (the HTML page):
// the headers and one line of cells per row of the report, in its order, as
// `format` prints them (text: control characters as \xNN; CSV: raw numbers).
struct TableCells {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};
TableCells table_cells(const Report& report, TableFormat format,
                       const std::vector<std::string>& columns = {});

// The lines under a table that say where each number came from: one per
// figure among the columns (the same choice as render_table's), then the
// FLOP convention, the ceiling and the provenance.
std::string render_legend(const Report& report, const std::vector<std::string>& columns = {});

}  // namespace cfr
