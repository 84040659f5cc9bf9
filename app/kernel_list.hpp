#pragma once

// `--list` (nvbench's habit): the kernels `--kernels` takes, one line each,
// printed instead of running. One function, so that kernels registered at run
// time (issue 11's plugins) add their lines here too.

#include <string>

#include <CLI/CLI.hpp>

namespace cfr::app {

// A header line, then per kernel: name, direction, dtypes, head dims, oldest
// compute capability, traffic model and its summary.
std::string kernel_list_text();

// Adds `--list` to a command: print kernel_list_text() and exit 0.
void add_list_flag(CLI::App& command);

}  // namespace cfr::app
