#pragma once

// CLI11 checks that every command's options share. CLI11's own Range lets
// NaN through (NaN < min and NaN > max are both false) and knows nothing of
// empty strings, so each numeric option and each path or list option of this
// tool goes through one of these.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace cfr::app {

// A finite number in [low, high]; "nan", "inf" and "1e999" are refused.
CLI::Validator finite_number(double low, double high);

// A finite number in (low, high]: "must be above low".
CLI::Validator finite_number_above(double low, double high);

// A decimal integer in [low, high], rewritten in canonical form before CLI11
// converts it (CLI11 reads "010" as octal 8 and "-1" as 2^64 - 1 for an
// unsigned option).
CLI::Validator integer_in(std::int64_t low, std::int64_t high);
// The same for the full unsigned 64-bit range (a seed).
CLI::Validator unsigned_integer();

// Refuses an empty value: `--json ''`, `--kernels ''`, `--gpu-table ''`.
CLI::Validator not_empty();

// An option naming an output: PATH in --help, refused when empty, "- or
// stdout" told. `what` is what gets written, e.g. "write the report JSON".
CLI::Option* add_output_option(CLI::App& command, const std::string& name, std::string& path,
                               const std::string& what);

// An option or positional naming a file the command reads (one, or several):
// FILE in --help, refused when empty.
template <typename Files>
CLI::Option* add_input_option(CLI::App& command, const std::string& name, Files& files,
                              const std::string& description) {
  return command.add_option(name, files, description)->type_name("FILE")->check(not_empty());
}

// --gpu-table FILE, the GPU table in place of the built-in one.
CLI::Option* add_gpu_table_option(CLI::App& command, std::string& path);

}  // namespace cfr::app
