#include "report_table.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cfr {

namespace {

struct Column {
  std::string header;
  bool measured;  // only shown when some row carries a timing
  std::function<std::string(const ResultRow&)> cell;
};

std::string number(double value, int digits) {
  return fmt::format("{:.{}f}", value, digits);
}

std::string optional(const std::optional<double>& value, int digits) {
  return value ? number(*value, digits) : "-";
}

bool has_model(const ResultRow& row) {
  return row.traffic.bytes > 0;
}

std::vector<Column> columns() {
  return {
      {"kernel", false, [](const ResultRow& r) { return r.kernel; }},
      {"dir", false,
       [](const ResultRow& r) {
         return std::string(r.direction == Direction::forward ? "fwd" : "bwd");
       }},
      {"dtype", false, [](const ResultRow& r) { return std::string(to_string(r.dtype)); }},
      {"B", false, [](const ResultRow& r) { return fmt::format("{}", r.batch); }},
      {"H", false, [](const ResultRow& r) { return fmt::format("{}", r.heads); }},
      {"N", false, [](const ResultRow& r) { return fmt::format("{}", r.seq_len); }},
      {"d", false, [](const ResultRow& r) { return fmt::format("{}", r.head_dim); }},
      {"causal", false, [](const ResultRow& r) { return std::string(r.causal ? "yes" : "no"); }},
      {"tile", false,
       [](const ResultRow& r) {
         return r.tile.tiled() ? fmt::format("{}x{}", r.tile.br, r.tile.bc) : std::string("-");
       }},
      {"unit", false, [](const ResultRow& r) { return std::string(to_string(r.compute_unit)); }},
      {"dev", true,
       [](const ResultRow& r) {
         return r.device ? fmt::format("{}", *r.device) : std::string("-");
       }},
      {"GFLOP", false,
       [](const ResultRow& r) { return has_model(r) ? number(r.flops.counted() / 1e9, 1) : "-"; }},
      {"model GB", false,
       [](const ResultRow& r) { return has_model(r) ? number(r.traffic.bytes / 1e9, 3) : "-"; }},
      {"AI", false, [](const ResultRow& r) { return has_model(r) ? number(r.ai, 1) : "-"; }},
      {"ridge", false, [](const ResultRow& r) { return optional(r.ridge, 1); }},
      {"regime", false,
       [](const ResultRow& r) { return r.regime ? std::string(to_string(*r.regime)) : "-"; }},
      {"roof TFLOPS", false, [](const ResultRow& r) { return optional(r.roof_TFLOPs, 1); }},
      {"roof ms", false, [](const ResultRow& r) { return optional(r.roof_time_ms, 3); }},
      {"median ms", true,
       [](const ResultRow& r) { return r.timing ? number(r.timing->median_ms, 3) : "-"; }},
      {"TFLOPS", true,
       [](const ResultRow& r) { return r.achieved ? number(r.achieved->TFLOPs, 2) : "-"; }},
      {"GB/s", true,
       [](const ResultRow& r) { return r.achieved ? number(r.achieved->bandwidth_GBps, 0) : "-"; }},
      {"% BW", true,
       [](const ResultRow& r) {
         return r.achieved ? number(100 * r.achieved->bandwidth_utilization, 1) : "-";
       }},
      {"% roof", true,
       [](const ResultRow& r) {
         return r.achieved ? number(100 * r.achieved->fraction_of_roof, 1) : "-";
       }},
      {"check", true,
       [](const ResultRow& r) {
         if (!r.correctness) return std::string("-");
         return fmt::format("{} {:.1e}", r.correctness->passed ? "pass" : "FAIL",
                            r.correctness->rel_l2_err);
       }},
      {"status", false,
       [](const ResultRow& r) {
         return r.reason.empty() ? std::string(to_string(r.status))
                                 : fmt::format("{}: {}", to_string(r.status), r.reason);
       }},
  };
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::vector<std::string> table_column_names() {
  std::vector<std::string> names;
  for (const Column& column : columns()) names.push_back(column.header);
  return names;
}

std::string render_table(const Report& report, TableFormat format,
                         const std::vector<std::string>& column_names) {
  std::vector<Column> all = columns();
  std::vector<Column> shown;
  if (column_names.empty()) {
    const bool measured = std::any_of(report.results.begin(), report.results.end(),
                                      [](const ResultRow& r) { return r.timing.has_value(); });
    for (Column& column : all) {
      if (!column.measured || measured) shown.push_back(std::move(column));
    }
  }
  for (const std::string& name : column_names) {
    const auto found =
        std::find_if(all.begin(), all.end(), [&name](const Column& c) { return c.header == name; });
    if (found == all.end()) {
      throw std::invalid_argument(fmt::format("unknown column '{}' (known: {})", name,
                                              fmt::join(table_column_names(), ", ")));
    }
    shown.push_back(*found);
  }
  std::vector<std::vector<std::string>> cells;
  cells.reserve(report.results.size());
  for (const ResultRow& row : report.results) {
    std::vector<std::string> line;
    for (const Column& column : shown) line.push_back(column.cell(row));
    cells.push_back(std::move(line));
  }

  std::string out;
  if (format == TableFormat::csv) {
    for (std::size_t c = 0; c < shown.size(); ++c) {
      if (c) out += ',';
      out += csv_escape(shown[c].header);
    }
    out += '\n';
    for (const auto& line : cells) {
      for (std::size_t c = 0; c < line.size(); ++c) {
        if (c) out += ',';
        out += csv_escape(line[c]);
      }
      out += '\n';
    }
    return out;
  }

  std::vector<std::size_t> widths;
  for (std::size_t c = 0; c < shown.size(); ++c) {
    std::size_t width = shown[c].header.size();
    for (const auto& line : cells) width = std::max(width, line[c].size());
    widths.push_back(width);
  }
  const bool markdown = format == TableFormat::markdown;
  auto emit = [&](const std::vector<std::string>& line) {
    std::string text = markdown ? "|" : "";
    for (std::size_t c = 0; c < line.size(); ++c) {
      text += markdown ? fmt::format(" {:<{}} |", line[c], widths[c])
                       : fmt::format("{:<{}}  ", line[c], widths[c]);
    }
    while (!markdown && !text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  };
  std::vector<std::string> headers;
  for (const Column& column : shown) headers.push_back(column.header);
  emit(headers);
  std::vector<std::string> rule;
  for (std::size_t width : widths) rule.push_back(std::string(width, '-'));
  emit(rule);
  for (const auto& line : cells) emit(line);
  return out;
}

std::string render_legend(const Report& report) {
  const Provenance& p = report.provenance;
  std::string convention = "exact";
  for (const ResultRow& row : report.results) {
    if (row.traffic.bytes > 0) {
      convention = std::string(to_string(row.flops.convention));
      break;
    }
  }
  std::string out;
  out += fmt::format(
      "GFLOP: matmul FLOPs, {} causal convention (model). model GB: HBM bytes of each kernel's "
      "traffic model (model). AI = GFLOP / model GB.\n",
      convention);
  out += fmt::format("ridge, roof: ceiling '{}' ({}, {}), per kernel compute unit.\n",
                     report.ceiling.gpu, report.ceiling.source, report.ceiling.source_detail);
  if (p.source == ProvenanceSource::measured) {
    out +=
        "median ms: measured with CUDA events (raw samples in the JSON); TFLOPS and GB/s are "
        "model counts over the measured median.\n";
  }
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
