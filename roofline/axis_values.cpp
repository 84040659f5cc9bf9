#include "axis_values.hpp"

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

constexpr std::size_t max_values = 100000;

std::int64_t parse_integer(std::string_view text, std::string_view whole, std::string_view axis) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not an integer (in '{}')", axis, text, whole));
  }
  if (value <= 0) {
    throw std::invalid_argument(fmt::format("{}: {} must be positive", axis, value));
  }
  return value;
}

void append_range(std::string_view item, std::string_view axis, std::vector<std::int64_t>& out) {
  const std::size_t first = item.find(':');
  const std::size_t second = item.find(':', first + 1);
  if (second == std::string_view::npos || item.find(':', second + 1) != std::string_view::npos) {
    throw std::invalid_argument(fmt::format(
        "{}: malformed range '{}' (expected START:END:xFACTOR or START:END:+STEP)", axis, item));
  }
  const std::int64_t start = parse_integer(item.substr(0, first), item, axis);
  const std::int64_t end = parse_integer(item.substr(first + 1, second - first - 1), item, axis);
  const std::string_view step = item.substr(second + 1);
  if (end < start) {
    throw std::invalid_argument(fmt::format("{}: range '{}' ends before it starts", axis, item));
  }
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) {
    throw std::invalid_argument(
        fmt::format("{}: malformed step '{}' in '{}' (use x2 or +64)", axis, step, item));
  }
  const std::int64_t amount = parse_integer(step.substr(1), item, axis);
  const bool geometric = step[0] == 'x';
  if (geometric && amount < 2) {
    throw std::invalid_argument(fmt::format("{}: factor in '{}' must be at least 2", axis, item));
  }
  for (std::int64_t value = start; value <= end;
       value = geometric ? value * amount : value + amount) {
    if (out.size() >= max_values) {
      throw std::invalid_argument(fmt::format("{}: range '{}' has too many values", axis, item));
    }
    out.push_back(value);
  }
}

}  // namespace

std::vector<std::int64_t> parse_axis_values(std::string_view text, std::string_view axis) {
  std::vector<std::int64_t> out;
  if (text.empty()) throw std::invalid_argument(fmt::format("{}: empty list", axis));
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, comma - begin);
    if (item.empty()) {
      throw std::invalid_argument(fmt::format("{}: empty item in '{}'", axis, text));
    }
    if (item.find(':') != std::string_view::npos) {
      append_range(item, axis, out);
    } else {
      out.push_back(parse_integer(item, text, axis));
    }
    begin = comma + 1;
  }
  return out;
}

}  // namespace cfr
