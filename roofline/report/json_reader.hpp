#pragma once

// A strict reader over one JSON object that knows its key path, so every
// schema error names the key: "results[3].timing.median_ms: missing".

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/errors.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr {

// A view of one JSON object that knows its key path for error messages.
class Node {
 public:
  Node(const nlohmann::json& value, std::string path) : value_(value), path_(std::move(path)) {
    if (!value_.is_object()) fail("expected an object");
  }

  [[noreturn]] void fail(std::string_view problem) const {
    throw InputError(fmt::format("{}: {}", path_.empty() ? "(top level)" : path_, problem));
  }

  std::string key_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }

  const nlohmann::json& get(std::string_view key) const {
    const auto it = value_.find(key);
    if (it == value_.end()) throw InputError(fmt::format("{}: missing", key_path(key)));
    return *it;
  }

  bool has(std::string_view key) const {
    const auto it = value_.find(key);
    return it != value_.end() && !it->is_null();
  }

  Node object(std::string_view key) const { return Node(get(key), key_path(key)); }

  double number(std::string_view key) const {
    const nlohmann::json& v = get(key);
    if (!v.is_number()) throw InputError(fmt::format("{}: expected a number", key_path(key)));
    const double x = v.get<double>();
    if (!std::isfinite(x)) throw InputError(fmt::format("{}: not finite", key_path(key)));
    return x;
  }

  std::optional<double> optional_number(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return number(key);
  }

  std::int64_t integer(std::string_view key) const {
    const nlohmann::json& v = get(key);
    if (!v.is_number_integer()) {
      throw InputError(fmt::format("{}: expected an integer", key_path(key)));
    }
    // An unsigned above 2^63 - 1 would wrap to a negative int64.
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InputError(
          fmt::format("{}: {} is out of range", key_path(key), v.get<std::uint64_t>()));
    }
    return v.get<std::int64_t>();
  }

  // An integer that must fit an int (a device index, a tile side, a count):
  // 2^32 is refused, never truncated to 0.
  int int32(std::string_view key) const {
    const std::int64_t value = integer(key);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
      throw InputError(fmt::format("{}: {} is out of range", key_path(key), value));
    }
    return static_cast<int>(value);
  }

  // A number that must be positive (a bandwidth, a peak, a time).
  double positive(std::string_view key) const {
    const double x = number(key);
    if (!(x > 0)) throw InputError(fmt::format("{}: must be positive, found {}", key_path(key), x));
    return x;
  }

  std::optional<double> optional_positive(std::string_view key) const {
    if (!has(key)) return std::nullopt;
    return positive(key);
  }

  bool boolean(std::string_view key) const {
    const nlohmann::json& v = get(key);
    if (!v.is_boolean()) throw InputError(fmt::format("{}: expected true or false", key_path(key)));
    return v.get<bool>();
  }

  std::string string(std::string_view key) const {
    const nlohmann::json& v = get(key);
    if (!v.is_string()) throw InputError(fmt::format("{}: expected a string", key_path(key)));
    return v.get<std::string>();
  }

  template <typename Parse>
  auto named(std::string_view key, Parse parse, std::string_view what) const {
    const std::string text = string(key);
    const auto parsed = parse(text);
    if (!parsed) {
      throw InputError(fmt::format("{}: unknown {} '{}'", key_path(key), what, text));
    }
    return *parsed;
  }

  const nlohmann::json& array(std::string_view key) const {
    const nlohmann::json& v = get(key);
    if (!v.is_array()) throw InputError(fmt::format("{}: expected a list", key_path(key)));
    return v;
  }

  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    const nlohmann::json& list = array(key);
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) {
        throw InputError(fmt::format("{}[{}]: expected a string", key_path(key), i));
      }
      out.push_back(list[i].get<std::string>());
    }
    return out;
  }

 private:
  const nlohmann::json& value_;
  std::string path_;
};

}  // namespace cfr
