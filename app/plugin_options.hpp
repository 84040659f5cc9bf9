#pragma once

// `--plugin PATH` (repeatable) and `--list` of `model` and `sweep`: plugin
// kernels join the process's registry before the plan is made, so
// `--kernels` selects them like built-in ones (docs/plugins.md).

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/report/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

struct PluginOptions {
  std::vector<std::string> paths;
  bool list = false;
};

void add_plugin_options(CLI::App& command, PluginOptions& options);

// --plugin FILE (repeatable) alone, with `what` for --help; an empty FILE is
// refused with one line (`--plugin: ...`), not read as a file named "".
CLI::Option* add_plugin_option(CLI::App& command, std::vector<std::string>& paths,
                               const std::string& what);

// Loads every --plugin into kernels::registry(), in order; throws
// std::invalid_argument with the loader's one line for a plugin it refuses.
// Returns what a report's provenance records of each kernel they brought.
std::vector<PluginKernelRecord> load_plugins(const PluginOptions& options);

// `audit --plugin FILE`: loads the plugins in order into a registry of their
// own (not the process's) and gives the byte count of each kernel that counts
// its own bytes, for audit to ask again. Throws std::invalid_argument with
// one line for a plugin the loader refuses, or one whose SHA-256 is not in
// the provenance.plugins of any of `reports` (read from `report_files`).
std::vector<evidence::PluginByteSource> plugin_byte_sources(
    const std::vector<std::string>& paths, const std::vector<Report>& reports,
    const std::vector<std::string>& report_files);

// One line per registered kernel: name, direction, dtypes, head dims, origin.
void print_kernel_list(std::ostream& out);

// What `model` and `sweep` do first: load the plugins; then, for --list,
// print the kernels to stdout and return nothing (the command is done), or
// plan the run over every registered kernel with the plugins' kernels in the
// plan for its report's provenance.
std::optional<SweepPlan> plan_with_plugins(const SweepOptions& sweep, const PluginOptions& plugins);

}  // namespace cfr::app
