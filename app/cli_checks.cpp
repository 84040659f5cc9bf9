#include "cli_checks.hpp"

#include <charconv>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace cfr::app {

namespace {

// Plain decimal notation only: from_chars takes no hex, no spaces, no '+'.
std::optional<double> finite(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

CLI::Validator finite_in(double low, double high, bool low_included) {
  return CLI::Validator(
      [low, high, low_included](std::string& text) -> std::string {
        const auto value = finite(text);
        if (!value) return fmt::format("'{}' is not a finite number", text);
        if ((low_included ? *value < low : *value <= low) || *value > high) {
          return fmt::format("{} is outside {}{:g}, {:g}]", text, low_included ? "[" : "(", low,
                             high);
        }
        return {};
      },
      fmt::format("{}{:g}, {:g}]", low_included ? "[" : "(", low, high));
}

}  // namespace

CLI::Validator finite_number(double low, double high) {
  return finite_in(low, high, true);
}

CLI::Validator finite_number_above(double low, double high) {
  return finite_in(low, high, false);
}

CLI::Validator integer_in(std::int64_t low, std::int64_t high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
          return fmt::format("'{}' is not an integer in [{}, {}]", text, low, high);
        }
        if (value < low || value > high) {
          return fmt::format("{} is outside [{}, {}]", text, low, high);
        }
        text = std::to_string(value);
        return {};
      },
      fmt::format("[{}, {}]", low, high));
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
          return fmt::format("'{}' is not an integer in [0, 2^64 - 1]", text);
        }
        text = std::to_string(value);
        return {};
      },
      "");
}

CLI::Validator not_empty() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; }, "");
}

CLI::Option* add_output_option(CLI::App& command, const std::string& name, std::string& path,
                               const std::string& what) {
  return command.add_option(name, path, what + " to PATH (- or stdout: stdout)")
      ->type_name("PATH")
      ->check(not_empty());
}

CLI::Option* add_gpu_table_option(CLI::App& command, std::string& path) {
  return add_input_option(command, "--gpu-table", path,
                          "GPU table JSON (default: configs/gpus.json, built in)");
}

}  // namespace cfr::app
