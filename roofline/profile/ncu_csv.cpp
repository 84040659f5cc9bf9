#include "roofline/profile/ncu_csv.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace cfr::ncu {

namespace {

constexpr std::string_view nvtx_column =
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
// Columns that describe the launch rather than measure it; every other column
// is a metric.
constexpr std::array<std::string_view, 13> launch_columns{
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    nvtx_column,
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC"};
constexpr std::string_view duration_metric = "gpu__time_duration.sum";

[[noreturn]] void fail(std::int64_t line, const std::string& problem) {
  throw InputError(fmt::format("line {}: {}", line, problem));
}

// One CSV record that fits on its line: fields separated by commas, quoted
// fields with "" for a quote.
std::vector<std::string> split_record(std::string_view text, std::int64_t line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (true) {
    std::string field;
    if (i < text.size() && text[i] == '"') {
      ++i;
      while (true) {
        if (i >= text.size()) fail(line, "a quoted field is not closed on its line");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      if (i < text.size() && text[i] != ',') {
        fail(line, fmt::format("text after a closing quote at column {}", i + 1));
      }
    } else {
      const std::size_t comma = text.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
      field = std::string(text.substr(i, end - i));
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= text.size()) return fields;
    ++i;  // the comma
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The digits of `text` without its thousands separators, or nullopt when the
// commas do not group the integer part by three ("1,5" is not a number here).
std::optional<std::string> without_separators(std::string_view text) {
  const std::size_t point = std::min(text.find_first_of(".eE"), text.size());
  const std::string_view integer = text.substr(0, point);
  if (integer.find(',') == std::string_view::npos) return std::string(text);
  std::string digits;
  std::size_t group = 0;
  bool first_group = true;
  for (std::size_t k = 0; k < integer.size(); ++k) {
    const char c = integer[k];
    if (c == ',') {
      if (group == 0 || (first_group && group > 3) || (!first_group && group != 3)) {
        return std::nullopt;
      }
      first_group = false;
      group = 0;
      continue;
    }
    if (is_digit(c)) ++group;
    digits += c;
  }
  if (group != 3) return std::nullopt;
  digits += text.substr(point);
  return digits;
}

// A metric value: a number, or unavailable with its text. Throws for text
// that starts like a number but is not one.
MetricValue parse_value(std::string_view raw, const std::string& unit, std::int64_t line,
                        std::string_view column) {
  const std::string_view text = trim(raw);
  MetricValue value{unit, std::nullopt, std::string(text)};
  if (text.empty() || text == "n/a" || text == "N/A") return value;
  const std::size_t digit = text.front() == '-' || text.front() == '+' ? 1 : 0;
  if (digit >= text.size() || !(is_digit(text[digit]) || text[digit] == '.')) return value;
  const std::optional<std::string> digits = without_separators(text);
  double number = 0;
  if (digits) {
    const char* begin = digits->data() + (digits->front() == '+' ? 1 : 0);
    const char* end = digits->data() + digits->size();
    const auto [stop, error] = std::from_chars(begin, end, number);
    if (error == std::errc() && stop == end) {
      value.value = number;
      return value;
    }
  }
  fail(line, fmt::format("column '{}': '{}' is not a number", column, text));
}

std::int64_t parse_integer(std::string_view raw, std::int64_t line, std::string_view what) {
  const std::string_view text = trim(raw);
  std::int64_t number = 0;
  const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc() || stop != text.data() + text.size()) {
    fail(line, fmt::format("{} '{}' is not an integer", what, text));
  }
  return number;
}

// "(256, 1, 1)"
Dim3 parse_dim3(std::string_view raw, std::int64_t line, std::string_view column) {
  const std::string_view text = trim(raw);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    fail(line, fmt::format("column '{}': '{}' is not (x, y, z)", column, text));
  }
  std::array<std::int64_t, 3> values{};
  std::string_view rest = text.substr(1, text.size() - 2);
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::size_t comma = rest.find(',');
    if ((k < 2) != (comma != std::string_view::npos)) {
      fail(line, fmt::format("column '{}': '{}' is not (x, y, z)", column, text));
    }
    values[k] = parse_integer(rest.substr(0, comma), line, column);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return {values[0], values[1], values[2]};
}

// The NVTX column: a thread id, then one quoted
// "Domain:Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg" per pushed range.
std::vector<std::string> parse_nvtx_stack(std::string_view text, std::int64_t line) {
  constexpr std::size_t fields_after_range = 6;
  std::vector<std::string> ranges;
  std::size_t open = text.find('"');
  while (open != std::string_view::npos) {
    const std::size_t close = text.find('"', open + 1);
    if (close == std::string_view::npos) fail(line, "NVTX column: an entry is not closed");
    const std::string_view entry = text.substr(open + 1, close - open - 1);
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
      const std::size_t colon = entry.find(':', start);
      parts.push_back(entry.substr(start, colon - start));
      if (colon == std::string_view::npos) break;
      start = colon + 1;
    }
    if (parts.size() < 2 + fields_after_range) {
      fail(line, fmt::format("NVTX entry '{}' is not Domain:Range:PL_Type:PL_Value:CLR_Type:"
                             "Color:Msg_Type:Msg",
                             entry));
    }
    // A range name may hold colons: it is everything between the domain and
    // the six trailing fields.
    const std::size_t name_begin = parts[0].size() + 1;
    std::size_t name_end = entry.size();
    for (std::size_t k = 0; k < fields_after_range; ++k) name_end = entry.rfind(':', name_end - 1);
    ranges.emplace_back(entry.substr(name_begin, name_end - name_begin));
    open = text.find('"', close + 1);
  }
  return ranges;
}

struct Columns {
  std::vector<std::string> names;
  std::vector<std::string> units;
  std::size_t id = 0, kernel = 0, block = 0, grid = 0;
  std::optional<std::size_t> nvtx;
  std::vector<std::size_t> metrics;
};

Columns read_header(std::vector<std::string> names, std::int64_t line) {
  Columns columns;
  const auto find = [&](std::string_view name) -> std::optional<std::size_t> {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return std::nullopt;
    return static_cast<std::size_t>(it - names.begin());
  };
  const auto require = [&](std::string_view name) {
    const std::optional<std::size_t> index = find(name);
    if (!index) fail(line, fmt::format("the header has no '{}' column", name));
    return *index;
  };
  columns.id = require("ID");
  columns.kernel = require("Kernel Name");
  columns.block = require("Block Size");
  columns.grid = require("Grid Size");
  columns.nvtx = find(nvtx_column);
  std::set<std::string_view> seen;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (!seen.insert(names[k]).second) fail(line, fmt::format("column '{}' twice", names[k]));
    if (std::find(launch_columns.begin(), launch_columns.end(), names[k]) == launch_columns.end()) {
      columns.metrics.push_back(k);
    }
  }
  columns.names = std::move(names);
  return columns;
}

Launch read_launch(const Columns& columns, const std::vector<std::string>& fields,
                   std::int64_t line) {
  Launch launch;
  launch.source_line = line;
  launch.id = parse_integer(fields[columns.id], line, "ID");
  launch.kernel_name = fields[columns.kernel];
  launch.block = parse_dim3(fields[columns.block], line, "Block Size");
  launch.grid = parse_dim3(fields[columns.grid], line, "Grid Size");
  if (columns.nvtx) launch.nvtx_ranges = parse_nvtx_stack(fields[*columns.nvtx], line);
  for (std::size_t k : columns.metrics) {
    launch.metrics.emplace(columns.names[k],
                           parse_value(fields[k], columns.units[k], line, columns.names[k]));
  }
  return launch;
}

}  // namespace

const MetricValue* Launch::metric(std::string_view name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

const MetricValue* RowCounters::metric(std::string_view name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

std::vector<Launch> parse_raw_csv(std::string_view text) {
  std::vector<Launch> launches;
  std::optional<Columns> columns;
  std::vector<std::string> header;
  bool expect_units = false;
  std::int64_t line = 0;
  std::int64_t header_line = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t newline = text.find('\n', start);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline;
    const std::string_view record = trim(text.substr(start, end - start));
    start = end + 1;
    ++line;
    if (record.empty() || record.front() != '"') continue;  // ncu's or the program's chatter
    std::vector<std::string> fields = split_record(record, line);
    if (expect_units) {
      if (fields.size() != header.size()) {
        fail(line, fmt::format("the units record has {} fields, the header {}", fields.size(),
                               header.size()));
      }
      if (!columns) {
        columns = read_header(header, header_line);
        columns->units = std::move(fields);
      } else if (fields != columns->units) {
        fail(line, "a repeated header's units differ from the first");
      }
      expect_units = false;
      continue;
    }
    // The first record is the header; ncu repeats it when it restarts a table.
    if (!columns || fields.front() == "ID") {
      if (columns && fields != columns->names) {
        fail(line, "a second header with different columns");
      }
      header = std::move(fields);
      header_line = line;
      expect_units = true;
      continue;
    }
    if (fields.size() != columns->names.size()) {
      fail(line, fmt::format("{} fields; the header has {}", fields.size(), columns->names.size()));
    }
    launches.push_back(read_launch(*columns, fields, line));
  }
  if (expect_units) fail(line, "the header is not followed by a units record");
  return launches;
}

Combine combine_rule(std::string_view metric) {
  const auto ends_with = [&](std::string_view suffix) { return metric.ends_with(suffix); };
  if (ends_with(".per_second") || ends_with(".pct") || ends_with(".ratio") ||
      metric.find(".pct_of_peak_") != std::string_view::npos) {
    return Combine::duration_weighted_mean;
  }
  if (ends_with(".sum") || ends_with(".avg")) return Combine::sum;
  if (ends_with(".max")) return Combine::max;
  if (ends_with(".min")) return Combine::min;
  return Combine::common;
}

namespace {

MetricValue combine_metric(std::string_view name, const std::vector<const Launch*>& launches) {
  const MetricValue* first = launches.front()->metric(name);
  MetricValue combined{first->unit, std::nullopt, ""};
  const Combine rule = combine_rule(name);
  double total = 0;
  double weight = 0;
  double extreme = rule == Combine::max ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity();
  for (const Launch* launch : launches) {
    const MetricValue* value = launch->metric(name);
    if (value == nullptr || !value->available()) {
      combined.text = fmt::format("unavailable in launch {}", launch->id);
      if (rule == Combine::common && value != nullptr && value->text == first->text) {
        combined.text = first->text;  // the same text value in every launch
        continue;
      }
      return combined;
    }
    switch (rule) {
      case Combine::sum: total += *value->value; break;
      case Combine::max: extreme = std::max(extreme, *value->value); break;
      case Combine::min: extreme = std::min(extreme, *value->value); break;
      case Combine::duration_weighted_mean: {
        const MetricValue* duration = launch->metric(duration_metric);
        if (duration == nullptr || !duration->available()) {
          combined.text =
              fmt::format("launch {} has no {} to weight by", launch->id, duration_metric);
          return combined;
        }
        total += *value->value * *duration->value;
        weight += *duration->value;
        break;
      }
      case Combine::common:
        if (!first->available() || *value->value != *first->value) {
          combined.text = "differs between launches";
          return combined;
        }
        total = *value->value;
        break;
    }
  }
  if (rule == Combine::common && !first->available()) return combined;
  if (rule == Combine::max || rule == Combine::min) total = extreme;
  if (rule == Combine::duration_weighted_mean) {
    if (!(weight > 0)) {
      combined.text = "zero total duration to weight by";
      return combined;
    }
    total /= weight;
  }
  combined.value = total;
  combined.text = fmt::format("{}", total);
  return combined;
}

}  // namespace

RowCounters combine_launches(const std::vector<const Launch*>& launches) {
  if (launches.empty()) throw std::invalid_argument("combine_launches: no launches");
  RowCounters row;
  for (const Launch* launch : launches) {
    row.launch_ids.push_back(launch->id);
    row.kernel_names.push_back(launch->kernel_name);
  }
  for (const auto& [name, value] : launches.front()->metrics) {
    row.metrics.emplace(name, combine_metric(name, launches));
  }
  return row;
}

namespace {

// The first range of the launch's stack from `from` on that starts with
// `prefix`, and the index it names: {position in the stack, index}. Throws
// InputError for a name like "cfr_row_x".
std::optional<std::pair<std::size_t, std::int64_t>> indexed_range(const Launch& launch,
                                                                  std::string_view prefix,
                                                                  std::size_t from = 0) {
  for (std::size_t i = from; i < launch.nvtx_ranges.size(); ++i) {
    const std::string& name = launch.nvtx_ranges[i];
    if (!name.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(name).substr(prefix.size());
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) {
      fail(launch.source_line, fmt::format("NVTX range '{}' is not {}<index>", name, prefix));
    }
    return std::pair{i, parse_integer(digits, launch.source_line, "range index")};
  }
  return std::nullopt;
}

}  // namespace

std::map<std::int64_t, RowCounters> group_rows(const std::vector<Launch>& launches) {
  std::map<std::int64_t, std::vector<const Launch*>> members;
  for (const Launch& launch : launches) {
    if (const auto row = indexed_range(launch, row_range_prefix)) {
      members[row->second].push_back(&launch);
    }
  }
  std::map<std::int64_t, RowCounters> rows;
  for (const auto& [index, group] : members) {
    RowCounters row = combine_launches(group);
    row.range = fmt::format("{}{}", row_range_prefix, index);
    rows.emplace(index, std::move(row));
  }
  return rows;
}

std::map<std::int64_t, std::vector<RowCounters>> group_row_launches(
    const std::vector<Launch>& launches, std::string_view group_prefix) {
  // Row index -> launch index (-1: the row's launches outside any launch
  // range) -> the kernels of that launch.
  std::map<std::int64_t, std::map<std::int64_t, std::vector<const Launch*>>> members;
  for (const Launch& launch : launches) {
    const auto row = indexed_range(launch, group_prefix);
    if (!row) continue;
    const auto repeat = indexed_range(launch, launch_range_prefix, row->first + 1);
    members[row->second][repeat ? repeat->second : -1].push_back(&launch);
  }
  std::map<std::int64_t, std::vector<RowCounters>> rows;
  for (const auto& [index, repeats] : members) {
    std::vector<RowCounters>& out = rows[index];
    for (const auto& [repeat, group] : repeats) {
      RowCounters launch = combine_launches(group);
      launch.range =
          repeat < 0 ? fmt::format("{}{}", group_prefix, index)
                     : fmt::format("{}{}/{}{}", group_prefix, index, launch_range_prefix, repeat);
      out.push_back(std::move(launch));
    }
  }
  return rows;
}

}  // namespace cfr::ncu
