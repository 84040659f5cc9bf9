#pragma once

// `--plugin PATH` (repeatable) and `--list` of `model` and `sweep`: plugin
// kernels join the process's registry before the plan is made, so
// `--kernels` selects them like built-in ones (docs/plugins.md).

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "roofline/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

struct PluginOptions {
  std::vector<std::string> paths;
  bool list = false;
};

void add_plugin_options(CLI::App& command, PluginOptions& options);

// Loads every --plugin into kernels::registry(), in order; throws
// std::invalid_argument with the loader's one line for a plugin it refuses.
// Returns what a report's provenance records of each kernel they brought.
std::vector<PluginKernelRecord> load_plugins(const PluginOptions& options);

// One line per registered kernel: name, direction, dtypes, head dims, origin.
void print_kernel_list(std::ostream& out);

// What `model` and `sweep` do first: load the plugins; then, for --list,
// print the kernels to stdout and return nothing (the command is done), or
// plan the run over every registered kernel with the plugins' kernels in the
// plan for its report's provenance.
std::optional<SweepPlan> plan_with_plugins(const SweepOptions& sweep, const PluginOptions& plugins);

}  // namespace cfr::app
