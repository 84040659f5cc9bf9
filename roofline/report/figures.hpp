#pragma once

// A result row's figures, each defined once (nvbench's summaries: a tag, a
// hint, a value and where it came from). The JSON writer and reader, the
// `table` columns, sets and legend, `audit`, `compare --figures`, `plot` and
// docs/report-schema.md's figure table all iterate over row_figures(): a new
// figure is its computation, its field and one entry in figures.cpp
// (docs/report-schema.md, "Adding a figure").

#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "roofline/report/report.hpp"

namespace cfr {

// Where a figure's value comes from. `derived` figures combine a model and a
// measurement (achieved TFLOP/s); `ceiling` ones come from the roof alone.
enum class FigureSource { model, measured, derived, ceiling, historical };
std::string_view to_string(FigureSource source);

// The part of a row that holds a figure. A figure is absent when its part is:
// a skipped row has no model, a ceiling without the row's peak no roofline.
// `profile`: figures derived from a profiled row's counters (row_profile.hpp);
// `energy`: from the board's energy counter around its launches (row_energy.hpp).
enum class FigureGroup { model, roofline, timing, achieved, claimed, profile, energy };

// How `table` prints a number: as stored, in units of 10^9 (GFLOP, GB), or a
// fraction as a percentage.
enum class FigureDisplay { plain, giga, percent };

// The column sets `table` shows without --columns, as flags on a column's
// descriptor (a figure here, a row field in report_table.cpp). The default is
// compact, one set for a report nothing was timed in and one for a report
// with a timed row; `--columns wide` is the longer set (issue 12: the full
// list was 202 columns wide).
struct ColumnSet {
  static constexpr unsigned wide = 1;
  static constexpr unsigned compact_model = 2;
  static constexpr unsigned compact_measured = 4;
  static constexpr unsigned compact = compact_model | compact_measured;
  // `--columns why`: what binds a profiled row (the limiter, the pipes, issue
  // slots, eligible warps, stalls) and its instruction's roof.
  static constexpr unsigned why = 8;
};

// Where a column sits in a compact table, which reads left to right: what the
// row is, its size (model) or its time (measured), its speed, where it sits
// on the roofline, its check, which bytes judged it, its status. Within a
// part, columns keep the order of the full list (table_column_names()).
enum class CompactPart { none, configuration, size, time, speed, roofline, check, bytes, status };

// Absent, a number in the figure's unit, or a word (a regime, a model name).
using FigureValue = std::variant<std::monostate, double, std::string>;

struct Figure {
  std::string_view tag{};    // stable machine name: "model/ai", "achieved/fraction_of_roof"
  std::string_view json{};   // key path in a result row; empty for a view of stored figures
  std::string_view unit{};   // FLOP, B, FLOP/B, TFLOPS, GB/s, ms, fraction, ratio; empty for a word
  std::string_view label{};  // the `table` column header, unique among the columns
  std::string_view description{};  // the legend's text
  FigureSource source = FigureSource::model;
  FigureGroup group = FigureGroup::model;
  FigureDisplay display = FigureDisplay::plain;
  int precision = 1;                             // decimals `table` prints, after `display`
  unsigned column_sets = 0;                      // ColumnSet flags
  CompactPart compact_part = CompactPart::none;  // with a compact set
  // Absent from reports written before the key existed; the reader accepts
  // its absence and `audit` does not count it missing.
  bool optional_on_read = false;
  // A signed figure (a model's error, model / measured - 1); every other
  // stored number is a count or a ratio of counts, which the reader refuses
  // below 0.
  bool may_be_negative = false;
  // Non-null: a column set shows the figure only where some row of the report
  // answers true (a memory roof other than the usual one), so a report none of
  // whose rows has it reads as before.
  bool (*shown_where)(const ResultRow&) = nullptr;
  // Precondition of both: the row has the figure's group.
  FigureValue (*read)(const ResultRow&) = nullptr;
  // False for a word the figure does not know. Null for a view.
  bool (*store)(ResultRow&, const FigureValue&) = nullptr;

  bool view() const { return json.empty(); }
  bool word() const { return unit.empty(); }
};

// Every figure, in the order of the `table` columns.
std::span<const Figure> row_figures();

// Nullptr when no figure has the tag.
const Figure* find_figure(std::string_view tag);
// The figure with this tag; throws std::invalid_argument naming an unknown one.
const Figure& figure(std::string_view tag);

bool has_group(const ResultRow& row, FigureGroup group);

// The figure's value in the row; std::monostate when its group is absent.
FigureValue figure_value(const Figure& figure, const ResultRow& row);
// The number, or empty when absent or a word.
std::optional<double> figure_number(const Figure& figure, const ResultRow& row);

// The unit of what `table` prints: "GFLOP", "GB", "%", or the stored unit.
std::string display_unit(const Figure& figure);

// As `table` prints it: scaled by `display`, at the figure's precision; a
// word as is; "-" when absent.
std::string format_figure(const Figure& figure, const FigureValue& value);

// For CSV: scaled by `display` as `table` prints it, at full precision; a
// word as is; empty when absent.
std::string format_figure_raw(const Figure& figure, const FigureValue& value);

}  // namespace cfr
