#include "roofline/core/axis_values.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/core/checked_math.hpp"

namespace cfr {

namespace {

constexpr std::string_view pow2_prefix = "[pow2]";
constexpr std::int64_t max_pow2_exponent = 62;

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::int64_t parse_integer(std::string_view text, std::string_view whole, std::string_view axis,
                           std::int64_t smallest = 1) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' is out of the 64-bit range (in '{}')", axis, text, whole));
  }
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not an integer (in '{}')", axis, text, whole));
  }
  if (value < smallest) {
    throw std::invalid_argument(smallest == 1 ? fmt::format("{}: {} must be positive", axis, value)
                                              : fmt::format("{}: {} must be at least {} (in '{}')",
                                                            axis, value, smallest, whole));
  }
  return value;
}

void append(std::vector<std::int64_t>& out, std::int64_t value, std::string_view item,
            std::string_view axis) {
  if (out.size() >= max_axis_values) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' makes more than {} values", axis, item, max_axis_values));
  }
  out.push_back(value);
}

struct Range {
  std::int64_t start = 0;
  std::int64_t end = 0;
  bool geometric = false;
  std::int64_t step = 1;  // the factor when geometric
};

Range parse_range(std::string_view item, std::string_view axis, std::int64_t smallest) {
  const std::size_t first = item.find(':');
  const std::size_t second = item.find(':', first + 1);
  if (second != std::string_view::npos && item.find(':', second + 1) != std::string_view::npos) {
    throw std::invalid_argument(fmt::format(
        "{}: malformed range '{}' (expected START:END, START:END:+STEP or START:END:xFACTOR)", axis,
        item));
  }
  Range range;
  range.start = parse_integer(item.substr(0, first), item, axis, smallest);
  range.end = parse_integer(item.substr(first + 1, second - first - 1), item, axis, smallest);
  if (range.end < range.start) {
    throw std::invalid_argument(fmt::format("{}: range '{}' ends before it starts", axis, item));
  }
  if (second == std::string_view::npos) return range;  // nvbench's default stride: +1
  const std::string_view step = item.substr(second + 1);
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    throw std::invalid_argument(
        fmt::format("{}: malformed step '{}' in '{}' (use x2 or +64)", axis, step, item));
  }
  range.geometric = step[0] == 'x';
  range.step = parse_integer(step.substr(1), item, axis);
  if (range.geometric && range.step < 2) {
    throw std::invalid_argument(fmt::format("{}: factor in '{}' must be at least 2", axis, item));
  }
  return range;
}

// Counted first, so that "1:10^12" fails before a value is stored; each next
// value is formed with checked arithmetic and ends the range where it would
// pass END or leave the 64-bit range.
void append_range(const Range& range, std::string_view item, std::string_view axis,
                  std::vector<std::int64_t>& out) {
  if (!range.geometric) {
    const std::int64_t count = (range.end - range.start) / range.step + 1;
    if (count < 0 || static_cast<std::uint64_t>(count) > max_axis_values - out.size()) {
      throw std::invalid_argument(
          fmt::format("{}: '{}' makes more than {} values", axis, item, max_axis_values));
    }
  }
  std::optional<std::int64_t> value = range.start;
  while (value && *value <= range.end) {
    append(out, *value, item, axis);
    value = range.geometric ? checked_mul(*value, range.step) : checked_add(*value, range.step);
  }
}

// One integer or one range of TEXT (the whole item is ITEM), every value at
// least `smallest`.
void append_item_values(std::string_view text, std::string_view item, std::string_view axis,
                        std::vector<std::int64_t>& out, std::int64_t smallest) {
  if (text.find(':') == std::string_view::npos) {
    append(out, parse_integer(text, item, axis, smallest), item, axis);
    return;
  }
  append_range(parse_range(text, axis, smallest), item, axis, out);
}

void append_item(std::string_view item, std::string_view axis, std::vector<std::int64_t>& out) {
  if (item.starts_with(pow2_prefix)) {
    std::vector<std::int64_t> exponents;
    append_item_values(item.substr(pow2_prefix.size()), item, axis, exponents, 0);
    for (std::int64_t exponent : exponents) {
      if (exponent > max_pow2_exponent) {
        throw std::invalid_argument(
            fmt::format("{}: 2^{} in '{}' is out of the 64-bit range (largest: 2^{})", axis,
                        exponent, item, max_pow2_exponent));
      }
      append(out, std::int64_t{1} << exponent, item, axis);
    }
    return;
  }
  append_item_values(item, item, axis, out, 1);
}

}  // namespace

std::vector<std::string_view> split_list(std::string_view text, std::string_view name) {
  if (trimmed(text).empty()) throw std::invalid_argument(fmt::format("{}: empty list", name));
  std::vector<std::string_view> items;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = trimmed(text.substr(begin, comma - begin));
    if (item.empty()) {
      throw std::invalid_argument(fmt::format("{}: empty item in '{}'", name, text));
    }
    items.push_back(item);
    begin = comma + 1;
  }
  return items;
}

std::vector<std::int64_t> parse_axis_values(std::string_view text, std::string_view axis) {
  std::vector<std::int64_t> out;
  for (std::string_view item : split_list(text, axis)) append_item(item, axis, out);
  return out;
}

}  // namespace cfr
