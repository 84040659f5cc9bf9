#pragma once

// Nsight Compute's raw CSV (`ncu --csv --page raw --print-units base`, with
// `--nvtx` for the range stack) as launches, and the launches of one
// configuration (the NVTX range `cfr_row_<i>` that the single-launch mode
// pushes) combined into one set of counters. Pure: the caller reads the file.
//
// What the parser accepts, as ncu 2025.3 writes it (fixtures under
// tests/roofline/fixtures/ncu/):
// - a header record starting with "ID", then a units record, then one record
//   per launch; every field quoted, "" escaping a quote;
// - lines that are not records (==PROF==, ==WARNING==, the program's own
//   output) anywhere: skipped;
// - numbers with thousands separators ("1,234,567.5") or without;
// - empty and "n/a" values, and text values: kept as unavailable;
// - the NVTX column "thread Domain:Push/Pop_Range:..." absent (no --nvtx):
//   launches have an empty range stack.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/errors.hpp"

namespace cfr::ncu {

struct MetricValue {
  std::string unit;             // from the units record: "byte", "ns", "" for plain counts
  std::optional<double> value;  // empty: unavailable (empty, "n/a", text, not measured)
  std::string text;             // the value as ncu printed it, or why it is unavailable

  bool available() const { return value.has_value(); }
};

using MetricMap = std::map<std::string, MetricValue, std::less<>>;

struct Dim3 {
  std::int64_t x = 1;
  std::int64_t y = 1;
  std::int64_t z = 1;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

struct Launch {
  std::int64_t id = 0;
  std::int64_t source_line = 0;  // the record's line in the input, for messages
  std::string kernel_name;
  std::vector<std::string> nvtx_ranges;  // push/pop stack, outermost first
  Dim3 grid;
  Dim3 block;
  MetricMap metrics;  // every column after "CC", by name

  // nullptr when the CSV has no such column.
  const MetricValue* metric(std::string_view name) const;
};

std::vector<Launch> parse_raw_csv(std::string_view text);

// How the launches of one configuration combine into one value per metric,
// chosen by the metric's suffix:
//   .sum, .avg             summed (an average over a unit's instances sums
//                          like the counter: same instances every launch)
//   .max / .min            the largest / smallest launch value
//   .per_second, .pct,
//   .ratio, .pct_of_peak_* the mean weighted by gpu__time_duration.sum (exact
//                          for rates: a rate times its duration is a count; a
//                          share of peak cycles is one where the launches run
//                          at one clock)
//   anything else          the launches' common value; unavailable when they
//                          differ (launch__*, device__attribute_*)
// gpu__time_duration.sum is a .sum: the launches' durations add up.
enum class Combine { sum, max, min, duration_weighted_mean, common };

Combine combine_rule(std::string_view metric);

struct RowCounters {
  std::string range;  // "cfr_row_3"
  std::vector<std::int64_t> launch_ids;
  std::vector<std::string> kernel_names;
  MetricMap metrics;  // combined; a metric unavailable in any launch stays unavailable

  const MetricValue* metric(std::string_view name) const;
};

// Combines launches by combine_rule. Throws std::invalid_argument when given none.
RowCounters combine_launches(const std::vector<const Launch*>& launches);

inline constexpr std::string_view row_range_prefix = "cfr_row_";

// Launches grouped by the first range of their stack named
// `row_range_prefix<index>`, keyed by index; launches outside such a range
// are left out. Throws InputError for a range like "cfr_row_x" (naming the
// launch's line).
std::map<std::int64_t, RowCounters> group_rows(const std::vector<Launch>& launches);

// The profiled launches of one row, each in its own range
// `launch_range_prefix<k>` inside the row's (profile-child --launches K):
// a row's launches grouped by that range, in k order, each group's kernels
// combined as group_rows combines a row's. A row's kernels outside any
// launch range (a CSV written before the ranges existed) are one launch,
// listed first. Throws InputError for a malformed index, as group_rows.
// `group_prefix` names the ranges to group: the rows', or the timer floors'
// (profile-child times and profiles `floor_range_prefix<k>`, k empty kernels).
inline constexpr std::string_view launch_range_prefix = "cfr_launch_";
inline constexpr std::string_view floor_range_prefix = "cfr_floor_";
std::map<std::int64_t, std::vector<RowCounters>> group_row_launches(
    const std::vector<Launch>& launches, std::string_view group_prefix = row_range_prefix);

// The floor range's index of `kernels` empty kernels on `device`.
inline constexpr std::int64_t floor_device_stride = 1000;
constexpr std::int64_t floor_range_index(int device, int kernels) {
  return device * floor_device_stride + kernels;
}

}  // namespace cfr::ncu
