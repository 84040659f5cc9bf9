#include "cli_checks.hpp"

#include <fmt/format.h>

namespace cfr::app {

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
