#include "roofline/report/report_table.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "roofline/report/figures.hpp"

namespace cfr {

namespace {

using Cell = std::function<std::string(const ResultRow&)>;

struct Column {
  std::string header;
  bool measured;  // only shown by default when some row carries a timing
  bool shown_by_default;
  bool profiled = false;           // only shown by default when some row has counters
  const Figure* figure = nullptr;  // the figure the column prints, if any
  Cell cell;
  Cell raw;              // CSV: a number at full precision, a boolean as true/false; empty: `cell`
  std::string legend{};  // the legend's line of a column that is not a figure
};

Column configuration(std::string header, Cell cell, bool measured = false, Cell raw = {},
                     std::string legend = {}) {
  return {std::move(header), measured,        true,           false,
          nullptr,           std::move(cell), std::move(raw), std::move(legend)};
}

Column figure_column(const Figure& f) {
  const bool measured = f.source == FigureSource::measured || f.source == FigureSource::derived;
  return {std::string(f.label),
          measured,
          f.default_column,
          f.group == FigureGroup::profile,
          &f,
          [&f](const ResultRow& row) { return format_figure(f, figure_value(f, row)); },
          [&f](const ResultRow& row) { return format_figure_raw(f, figure_value(f, row)); }};
}

// The default, compact set (issue 12: the full set was 202 columns wide); the
// full one is `--columns wide`.
const std::vector<std::string> compact_model_columns{
    "kernel", "dir",      "dtype", "B",     "H",      "N",           "d",       "causal", "unit",
    "GFLOP",  "model GB", "AI",    "ridge", "regime", "roof TFLOPS", "roof ms", "status"};
const std::vector<std::string> compact_measured_columns{
    "kernel",  "dir", "dtype",  "B",      "H",  "N",      "d",     "causal", "median ms",
    "noise %", "n",   "TFLOPS", "% roof", "AI", "regime", "check", "status"};

// The configuration of a row, then one column per figure (row_figures()
// order), then its correctness check and status.
std::vector<Column> columns() {
  std::vector<Column> out{
      configuration("kernel", [](const ResultRow& r) { return r.kernel; }),
      configuration("dir",
                    [](const ResultRow& r) {
                      return std::string(r.direction == Direction::forward ? "fwd" : "bwd");
                    }),
      configuration("dtype",
                    [](const ResultRow& r) { return std::string(to_string(r.problem.dtype)); }),
      configuration("B", [](const ResultRow& r) { return fmt::format("{}", r.problem.batch); }),
      configuration("H", [](const ResultRow& r) { return fmt::format("{}", r.problem.heads); }),
      configuration("N", [](const ResultRow& r) { return fmt::format("{}", r.problem.seq_len); }),
      configuration("d", [](const ResultRow& r) { return fmt::format("{}", r.problem.head_dim); }),
      configuration(
          "causal", [](const ResultRow& r) { return std::string(r.problem.causal ? "yes" : "no"); },
          false,
          [](const ResultRow& r) { return std::string(r.problem.causal ? "true" : "false"); }),
      configuration("tile",
                    [](const ResultRow& r) {
                      return r.tile.tiled() ? fmt::format("{}x{}", r.tile.br, r.tile.bc)
                                            : std::string("-");
                    }),
      configuration("unit",
                    [](const ResultRow& r) { return std::string(to_string(r.compute_unit)); }),
      configuration(
          "dev", [](const ResultRow& r) { return r.device ? fmt::format("{}", *r.device) : "-"; },
          true),
  };
  for (const Figure& f : row_figures()) out.push_back(figure_column(f));
  // The sampling behind the median: relative stdev (stdev / mean) and count.
  out.push_back(configuration(
      "noise %",
      [](const ResultRow& r) {
        return r.timing && r.timing->summary.count > 1
                   ? fmt::format("{:.1f}", 100 * r.timing->summary.relative_stdev())
                   : std::string("-");
      },
      true,
      [](const ResultRow& r) {
        return r.timing && r.timing->summary.count > 1
                   ? fmt::format("{}", 100 * r.timing->summary.relative_stdev())
                   : std::string();
      },
      "noise %: relative standard deviation of the samples, stdev / mean (measured, %)"));
  out.push_back(configuration(
      "n",
      [](const ResultRow& r) {
        if (!r.timing) return std::string("-");
        const std::size_t kept = r.timing->samples_ms.size();
        if (r.timing->kept_throttled) return fmt::format("{} thr", kept);
        if (r.timing->throttled_discarded > 0) {
          return fmt::format("{} -{}thr", kept, r.timing->throttled_discarded);
        }
        return fmt::format("{}", kept);
      },
      true,
      [](const ResultRow& r) {
        return r.timing ? fmt::format("{}", r.timing->samples_ms.size()) : std::string();
      },
      "n: samples timed (measured; the JSON keeps each one); \"-3thr\": 3 more were discarded "
      "as throttled (SM clock under --throttle-threshold), \"thr\": throttled samples kept "
      "because too few others were left"));
  out.push_back(configuration(
      "throttled",
      [](const ResultRow& r) {
        return r.timing ? fmt::format("{}", r.timing->throttled_discarded) : std::string("-");
      },
      true,
      [](const ResultRow& r) {
        return r.timing ? fmt::format("{}", r.timing->throttled_discarded) : std::string();
      },
      "throttled: samples discarded because the SM clock read under --throttle-threshold "
      "(measured)"));
  out.push_back(configuration(
      "check",
      [](const ResultRow& r) {
        if (!r.correctness) return std::string("-");
        return fmt::format("{} {:.1e}", r.correctness->passed ? "pass" : "FAIL",
                           r.correctness->rel_l2_err);
      },
      true,
      // CSV: the error itself; a failed check makes the row's status failed.
      [](const ResultRow& r) {
        return r.correctness ? fmt::format("{}", r.correctness->rel_l2_err) : std::string();
      },
      "check: the output against the reference, pass or FAIL and the relative L2 error of the "
      "worst tensor (measured; CSV: the error)"));
  out.push_back(configuration("status", [](const ResultRow& r) {
    return r.reason.empty() ? std::string(to_string(r.status))
                            : fmt::format("{}: {}", to_string(r.status), r.reason);
  }));
  return out;
}

// The columns by name; no names: the compact set (the measured one when some
// row was measured, with the limiter when some row was profiled); "wide":
// every default column, the measured ones only when some row was measured,
// the profile ones only when some row was profiled.
std::vector<Column> chosen_columns(const Report& report, std::vector<std::string> names) {
  std::vector<Column> all = columns();
  std::vector<Column> shown;
  const bool measured = std::any_of(report.results.begin(), report.results.end(),
                                    [](const ResultRow& r) { return r.timing.has_value(); });
  const bool profiled =
      std::any_of(report.results.begin(), report.results.end(),
                  [](const ResultRow& r) { return has_group(r, FigureGroup::profile); });
  if (names == std::vector<std::string>{"wide"}) {
    for (Column& column : all) {
      if (column.shown_by_default && (!column.measured || measured) &&
          (!column.profiled || profiled)) {
        shown.push_back(std::move(column));
      }
    }
    return shown;
  }
  if (names.empty()) {
    names = measured ? compact_measured_columns : compact_model_columns;
    // Which bytes the regime and % roof are from, and, with counters, what
    // the measured DRAM bytes say (issue 10).
    names.insert(names.end() - 1, "DRAM model");
    if (profiled) {
      names.insert(names.end() - 1, {"regime (ncu DRAM)", "% roof (ncu DRAM)", "limiter"});
    }
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), name) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::invalid_argument(fmt::format("column '{}' appears twice", name));
    }
    const auto found =
        std::find_if(all.begin(), all.end(), [&name](const Column& c) { return c.header == name; });
    if (found == all.end()) {
      throw std::invalid_argument(fmt::format("unknown column '{}' (known: {}; or wide)", name,
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
  for (const Column& column : columns()) names.push_back(column.header);
  return names;
}

std::string render_table(const Report& report, TableFormat format,
                         const std::vector<std::string>& column_names) {
  const std::vector<Column> shown = chosen_columns(report, column_names);
  std::vector<std::string> headers;
  for (const Column& column : shown) headers.push_back(column.header);
  std::vector<std::vector<std::string>> cells;
  cells.reserve(report.results.size());
  for (const ResultRow& row : report.results) {
    std::vector<std::string> line;
    for (const Column& column : shown) {
      if (format == TableFormat::csv) {
        line.push_back(column.raw ? column.raw(row) : column.cell(row));
      } else {
        line.push_back(shown_cell(column.cell(row), format == TableFormat::markdown));
      }
    }
    cells.push_back(std::move(line));
  }
  if (format == TableFormat::csv) return render_csv(headers, cells);
  return render_aligned(headers, cells, format == TableFormat::markdown);
}

std::string render_legend(const Report& report, const std::vector<std::string>& column_names) {
  std::string out;
  for (const Column& column : chosen_columns(report, column_names)) {
    if (!column.legend.empty()) out += column.legend + '\n';
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
