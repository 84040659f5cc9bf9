#include "cli_checks.hpp"

#include <charconv>

#include <fmt/format.h>

namespace cfr::app {

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
