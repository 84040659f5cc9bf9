#include "roofline/report/figures_doc.hpp"

#include <fmt/format.h>

#include "roofline/report/figures.hpp"

namespace cfr {

namespace {

// A Markdown cell: a pipe would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string default_sets(const Figure& f) {
  const unsigned sets = f.column_sets;
  const bool model = (sets & ColumnSet::compact_model) != 0;
  const bool measured = (sets & ColumnSet::compact_measured) != 0;
  std::string out = model && measured ? "compact"
                    : model           ? "compact (model)"
                    : measured        ? "compact (measured)"
                                      : "";
  if ((sets & ColumnSet::wide) != 0) out += out.empty() ? "wide" : ", wide";
  if ((sets & ColumnSet::why) != 0) out += out.empty() ? "why" : ", why";
  if (out.empty()) return "no";
  return f.shown_where != nullptr ? out + " (only beside a row that needs it)" : out;
}

std::string source_of(const Figure& f) {
  const std::string source(to_string(f.source));
  return f.group == FigureGroup::profile ? source + " (profile)" : source;
}

}  // namespace

std::string render_figures_doc() {
  std::string out =
      "| tag | key | unit | `table` column | shown by default | source | meaning |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const Figure& f : row_figures()) {
    out += fmt::format("| `{}` | {} | {} | `{}` | {} | {} | {} |\n", f.tag,
                       f.view() ? "a view, not stored" : fmt::format("`{}`", f.json),
                       f.word() ? "word" : std::string(f.unit), cell(f.label), default_sets(f),
                       source_of(f), cell(f.description));
  }
  return out;
}

}  // namespace cfr
