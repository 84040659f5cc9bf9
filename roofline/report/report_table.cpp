#include "roofline/report/report_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "roofline/report/figures.hpp"

namespace cfr {

namespace {

// A column that is not a figure: what the row is, how it was sampled, its
// check and its status. Like a figure (figures.hpp), it carries the column
// sets that show it.
struct RowField {
  std::string_view label;
  std::string (*cell)(const ResultRow&);
  // CSV: a number at full precision, a boolean as true/false; null: `cell`.
  std::string (*raw)(const ResultRow&) = nullptr;
  unsigned column_sets = ColumnSet::wide;
  CompactPart compact_part = CompactPart::none;
  bool measured = false;      // shown by default only when some row was timed
  bool served = false;        // shown by default only when some row is not square self-attention
  std::string_view legend{};  // the legend's line; empty: none
};

// A field every compact table opens with: what the row is.
constexpr RowField opening(RowField field) {
  field.column_sets = ColumnSet::wide | ColumnSet::compact | ColumnSet::why;
  field.compact_part = CompactPart::configuration;
  return field;
}

// A field of the served shapes (issue 25): K/V heads, keys, page size, which a
// square problem does not have; shown by default only beside such a row.
constexpr RowField served(RowField field) {
  field = opening(field);
  field.served = true;
  return field;
}

// The configuration of a row, before its figures.
constexpr RowField configuration_fields[] = {
    opening({.label = "kernel", .cell = [](const ResultRow& r) { return r.kernel; }}),
    opening({.label = "dir",
             .cell =
                 [](const ResultRow& r) {
                   return std::string(r.direction == Direction::forward ? "fwd" : "bwd");
                 }}),
    opening({.label = "dtype",
             .cell = [](const ResultRow& r) { return std::string(to_string(r.problem.dtype)); }}),
    opening({.label = "B",
             .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.batch); }}),
    opening({.label = "H",
             .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.heads); }}),
    served({.label = "Hkv",
            .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.key_heads()); },
            .legend = "Hkv: K/V heads (GQA, MQA: fewer than H; as many without)"}),
    opening({.label = "N",
             .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.seq_len); }}),
    served({.label = "Nk",
            .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.keys()); },
            .legend = "Nk: keys (the K/V cache); N is then the query tokens, and causal is "
                      "bottom-right aligned"}),
    opening({.label = "d",
             .cell = [](const ResultRow& r) { return fmt::format("{}", r.problem.head_dim); }}),
    served({.label = "page",
            .cell =
                [](const ResultRow& r) {
                  return r.problem.paged() ? fmt::format("{}", r.problem.page_size)
                                           : std::string("-");
                },
            .raw = [](const ResultRow& r) { return fmt::format("{}", r.problem.page_size); },
            .legend = "page: tokens a page of a paged K/V cache, pages shuffled; - contiguous"}),
    opening(
        {.label = "causal",
         .cell = [](const ResultRow& r) { return std::string(r.problem.causal ? "yes" : "no"); },
         .raw =
             [](const ResultRow& r) { return std::string(r.problem.causal ? "true" : "false"); }}),
    {.label = "tile",
     .cell =
         [](const ResultRow& r) {
           return r.tile.tiled() ? fmt::format("{}x{}", r.tile.br, r.tile.bc) : std::string("-");
         }},
    {.label = "unit",
     .cell = [](const ResultRow& r) { return std::string(to_string(r.compute_unit)); },
     .column_sets = ColumnSet::wide | ColumnSet::compact_model,
     .compact_part = CompactPart::configuration},
    {.label = "dev",
     .cell =
         [](const ResultRow& r) {
           return r.device ? fmt::format("{}", *r.device) : std::string("-");
         },
     .measured = true},
};

// After the figures: the sampling behind the median, the check and the status.
constexpr RowField outcome_fields[] = {
    {.label = "noise %",
     .cell =
         [](const ResultRow& r) {
           return r.timing && r.timing->summary.count > 1
                      ? fmt::format("{:.1f}", 100 * r.timing->summary.relative_stdev())
                      : std::string("-");
         },
     .raw =
         [](const ResultRow& r) {
           return r.timing && r.timing->summary.count > 1
                      ? fmt::format("{}", 100 * r.timing->summary.relative_stdev())
                      : std::string();
         },
     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::time,
     .measured = true,
     .legend = "noise %: relative standard deviation of the samples, stdev / mean (measured, %)"},
    {.label = "n",
     .cell =
         [](const ResultRow& r) {
           if (!r.timing) return std::string("-");
           const std::size_t kept = r.timing->samples_ms.size();
           if (r.timing->kept_throttled) return fmt::format("{} thr", kept);
           if (r.timing->throttled_discarded > 0) {
             return fmt::format("{} -{}thr", kept, r.timing->throttled_discarded);
           }
           return fmt::format("{}", kept);
         },
     .raw =
         [](const ResultRow& r) {
           return r.timing ? fmt::format("{}", r.timing->samples_ms.size()) : std::string();
         },
     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::time,
     .measured = true,
     .legend = "n: samples timed (measured; the JSON keeps each one); \"-3thr\": 3 more were "
               "discarded as throttled (SM clock under --throttle-threshold), \"thr\": throttled "
               "samples kept because too few others were left"},
    {.label = "throttled",
     .cell =
         [](const ResultRow& r) {
           return r.timing ? fmt::format("{}", r.timing->throttled_discarded) : std::string("-");
         },
     .raw =
         [](const ResultRow& r) {
           return r.timing ? fmt::format("{}", r.timing->throttled_discarded) : std::string();
         },
     .measured = true,
     .legend = "throttled: samples discarded because the SM clock read under "
               "--throttle-threshold (measured)"},
    {.label = "check",
     .cell =
         [](const ResultRow& r) {
           if (!r.correctness) return std::string("-");
           return fmt::format("{} {:.1e}", r.correctness->passed ? "pass" : "FAIL",
                              r.correctness->rel_l2_err);
         },
     // CSV: the error itself; a failed check makes the row's status failed.
     .raw =
         [](const ResultRow& r) {
           return r.correctness ? fmt::format("{}", r.correctness->rel_l2_err) : std::string();
         },
     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::check,
     .measured = true,
     .legend = "check: the output against the reference, pass or FAIL and the relative L2 error "
               "of the worst tensor (measured; CSV: the error)"},
    {.label = "status",
     .cell =
         [](const ResultRow& r) {
           return r.reason.empty() ? std::string(to_string(r.status))
                                   : fmt::format("{}: {}", to_string(r.status), r.reason);
         },
     .column_sets = ColumnSet::wide | ColumnSet::compact,
     .compact_part = CompactPart::status},
};

// One column of the full list: a row field or a figure, with what the
// default sets need to know of either.
struct Column {
  std::string_view label;
  unsigned column_sets;
  CompactPart compact_part;
  bool measured;        // shown by default only when some row was timed
  bool profiled;        // shown by default only when some row has counters
  bool served = false;  // shown by default only when some row is not square
  const RowField* field = nullptr;
  const Figure* figure = nullptr;
  bool energy = false;  // shown by default only when some row has energy figures

  // Whether a default set shows it beside these rows (Figure::shown_where).
  bool wanted(const std::vector<ResultRow>& rows) const {
    if (figure == nullptr || figure->shown_where == nullptr) return true;
    return std::any_of(rows.begin(), rows.end(), figure->shown_where);
  }

  std::string cell(const ResultRow& row) const {
    return figure ? format_figure(*figure, figure_value(*figure, row)) : field->cell(row);
  }
  std::string raw(const ResultRow& row) const {
    if (figure) return format_figure_raw(*figure, figure_value(*figure, row));
    return field->raw ? field->raw(row) : field->cell(row);
  }
};

Column field_column(const RowField& f) {
  return {f.label, f.column_sets, f.compact_part, f.measured, false, f.served, &f, nullptr};
}

Column figure_column(const Figure& f) {
  const bool measured = f.source == FigureSource::measured || f.source == FigureSource::derived;
  return {f.label,
          f.column_sets,
          f.compact_part,
          measured,
          f.group == FigureGroup::profile,
          false,
          nullptr,
          &f,
          f.group == FigureGroup::energy};
}

// The configuration of a row, then one column per figure (row_figures()
// order), then its sampling, check and status.
std::vector<Column> columns() {
  std::vector<Column> out;
  for (const RowField& f : configuration_fields) out.push_back(field_column(f));
  for (const Figure& f : row_figures()) out.push_back(figure_column(f));
  for (const RowField& f : outcome_fields) out.push_back(field_column(f));
  return out;
}

// A set `--columns` names: the compact one (no names), "wide" or "why".
enum class NamedSet { compact, wide, why };

// Without names, the columns of a set, by their flags. The compact set of a
// report with a timed row or of one without, in its parts' order; a profile
// column only when some row has counters. "wide" and "why": in the full
// list's order, the measured columns only when some row was timed, the
// profile ones only when some row has counters. Any: the served-shape ones
// only beside a served shape, a figure with shown_where only beside a row it
// names.
std::vector<Column> columns_of_set(const Report& report, NamedSet named) {
  const bool wide = named != NamedSet::compact;
  const bool measured = std::any_of(report.results.begin(), report.results.end(),
                                    [](const ResultRow& r) { return r.timing.has_value(); });
  const bool profiled =
      std::any_of(report.results.begin(), report.results.end(),
                  [](const ResultRow& r) { return has_group(r, FigureGroup::profile); });
  const bool served = std::any_of(report.results.begin(), report.results.end(),
                                  [](const ResultRow& r) { return !r.problem.square(); });
  const bool energy =
      std::any_of(report.results.begin(), report.results.end(),
                  [](const ResultRow& r) { return has_group(r, FigureGroup::energy); });
  const unsigned set = named == NamedSet::why    ? ColumnSet::why
                       : named == NamedSet::wide ? ColumnSet::wide
                       : measured                ? ColumnSet::compact_measured
                                                 : ColumnSet::compact_model;
  std::vector<Column> shown;
  for (const Column& column : columns()) {
    if ((column.column_sets & set) == 0 || (column.profiled && !profiled)) continue;
    if ((column.served && !served) || !column.wanted(report.results)) continue;
    if (column.energy && !energy) continue;
    if (wide && column.measured && !measured) continue;
    shown.push_back(column);
  }
  if (!wide) {
    std::stable_sort(shown.begin(), shown.end(), [](const Column& a, const Column& b) {
      return a.compact_part < b.compact_part;
    });
  }
  return shown;
}

// The columns by name; no names: the compact set; "wide", "why": that set.
std::vector<Column> chosen_columns(const Report& report, const std::vector<std::string>& names) {
  if (names.empty()) return columns_of_set(report, NamedSet::compact);
  if (names == std::vector<std::string>{"wide"}) return columns_of_set(report, NamedSet::wide);
  if (names == std::vector<std::string>{"why"}) return columns_of_set(report, NamedSet::why);
  const std::vector<Column> all = columns();
  std::vector<Column> shown;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::invalid_argument(fmt::format("column '{}' appears twice", name));
    }
    const auto found =
        std::find_if(all.begin(), all.end(), [&name](const Column& c) { return c.label == name; });
    if (found == all.end()) {
      throw std::invalid_argument(fmt::format("unknown column '{}' (known: {}; or wide, why)", name,
                                              fmt::join(table_column_names(), ", ")));
    }
    shown.push_back(*found);
  }
  return shown;
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string render_csv(const std::vector<std::string>& headers,
                       const std::vector<std::vector<std::string>>& cells) {
  std::string out;
  auto emit = [&out](const std::vector<std::string>& line) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      if (c) out += ',';
      out += csv_escape(line[c]);
    }
    out += '\n';
  };
  emit(headers);
  for (const auto& line : cells) emit(line);
  return out;
}

// A cell as a text or Markdown table can show it: a control character (a
// newline or ESC in a reason a file carries) as \xNN, so it cannot split a
// row or reach the terminal; in Markdown a pipe escaped, so it cannot split a
// cell.
std::string shown_cell(std::string_view cell, bool markdown) {
  std::string out;
  for (const char c : cell) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else if (markdown && c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

// Text: columns padded and two spaces apart; Markdown: a pipe table.
std::string render_aligned(const std::vector<std::string>& headers,
                           const std::vector<std::vector<std::string>>& cells, bool markdown) {
  std::vector<std::size_t> widths;
  for (std::size_t c = 0; c < headers.size(); ++c) {
    std::size_t width = headers[c].size();
    for (const auto& line : cells) width = std::max(width, line[c].size());
    widths.push_back(width);
  }
  std::string out;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string text = markdown ? "|" : "";
    for (std::size_t c = 0; c < line.size(); ++c) {
      text += markdown ? fmt::format(" {:<{}} |", line[c], widths[c])
                       : fmt::format("{:<{}}  ", line[c], widths[c]);
    }
    while (!markdown && !text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  };
  emit(headers);
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.push_back(std::string(width, '-'));
  emit(rule);
  for (const auto& line : cells) emit(line);
  return out;
}

}  // namespace

std::vector<std::string> table_column_names() {
  std::vector<std::string> names;
  for (const Column& column : columns()) names.emplace_back(column.label);
  return names;
}

TableCells table_cells(const Report& report, TableFormat format,
                       const std::vector<std::string>& column_names) {
  const std::vector<Column> shown = chosen_columns(report, column_names);
  TableCells table;
  for (const Column& column : shown) table.headers.emplace_back(column.label);
  table.rows.reserve(report.results.size());
  for (const ResultRow& row : report.results) {
    std::vector<std::string> line;
    for (const Column& column : shown) {
      if (format == TableFormat::csv) {
        line.push_back(column.raw(row));
      } else {
        line.push_back(shown_cell(column.cell(row), format == TableFormat::markdown));
      }
    }
    table.rows.push_back(std::move(line));
  }
  return table;
}

std::string render_table(const Report& report, TableFormat format,
                         const std::vector<std::string>& column_names) {
  const TableCells table = table_cells(report, format, column_names);
  if (format == TableFormat::csv) return render_csv(table.headers, table.rows);
  return render_aligned(table.headers, table.rows, format == TableFormat::markdown);
}

std::string render_legend(const Report& report, const std::vector<std::string>& column_names) {
  std::string out;
  for (const Column& column : chosen_columns(report, column_names)) {
    if (column.field != nullptr && !column.field->legend.empty()) {
      out += fmt::format("{}\n", column.field->legend);
    }
    if (column.figure == nullptr) continue;
    const Figure& f = *column.figure;
    const std::string unit = display_unit(f);
    out += fmt::format("{}: {} ({}{}{})\n", f.label, f.description, to_string(f.source),
                       unit.empty() ? "" : ", ", unit);
  }
  std::string convention = "exact";
  for (const ResultRow& row : report.results) {
    if (row.model) {
      convention = std::string(to_string(row.model->flops.convention));
      break;
    }
  }
  out += fmt::format("FLOPs are counted in the {} causal convention.\n", convention);
  out += fmt::format("ceiling '{}' ({}, {}), per row compute unit.\n", report.ceiling.gpu,
                     report.ceiling.source, report.ceiling.source_detail);
  const Provenance& p = report.provenance;
  out += fmt::format("provenance: {}, auditable: {}", to_string(p.source),
                     p.auditable ? "true" : "false");
  if (!p.reasons.empty()) {
    out += " —";
    for (const std::string& reason : p.reasons) out += fmt::format("\n  - {}", reason);
  }
  out += '\n';
  return out;
}

}  // namespace cfr
