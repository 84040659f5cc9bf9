#pragma once

// The figure table of docs/report-schema.md, written from the descriptors
// (figures.hpp) so that the page cannot drift from them: the hidden command
// `cuflash-roofline figure-table` prints it, docs/update-figure-table.sh
// splices it into the page, and a test compares the page with it.

#include <string>

namespace cfr {

// A Markdown table, one row per figure in row_figures() order: tag, JSON key
// (or "a view, not stored"), unit ("word" for a word), `table` column, the
// column sets that show it without --columns ("no": none), source, and the
// legend's text. Ends with a newline.
std::string render_figures_doc();

}  // namespace cfr
