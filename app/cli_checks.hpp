#pragma once

// CLI11 checks and option helpers that every command shares: an integer is
// read in decimal and checked against its range before CLI11 converts it, and
// an option that names a file or an output refuses an empty value, where CLI11
// would take '' as "not given".

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace cfr::app {

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
