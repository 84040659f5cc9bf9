#include "plugin_options.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_checks.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/plugin/plugin_loader.hpp"

namespace cfr::app {

CLI::Option* add_plugin_option(CLI::App& command, std::vector<std::string>& paths,
                               const std::string& what) {
  return add_input_option(command, "--plugin", paths, what);
}

void add_plugin_options(CLI::App& command, PluginOptions& options) {
  add_plugin_option(command, options.paths,
                    "load the kernels of a plugin shared library (repeatable; docs/plugins.md)");
  command.add_flag("--list", options.list,
                   "list the kernels (built in and from --plugin) with their origin, and exit");
}

std::vector<PluginKernelRecord> load_plugins(const PluginOptions& options) {
  std::vector<PluginKernelRecord> records;
  for (const std::string& path : options.paths) {
    const kernels::LoadedPlugin loaded = kernels::load_plugin(path, kernels::registry());
    records.insert(records.end(), loaded.kernels.begin(), loaded.kernels.end());
  }
  return records;
}

namespace {

// Every plugin file `reports` record, each once with its SHA-256, for the
// message of a SHA-256 that matches none: what the user may have meant.
std::string recorded_plugins(const std::vector<Report>& reports,
                             const std::vector<std::string>& report_files) {
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    for (const PluginKernelRecord& plugin : reports[i].provenance.plugins) {
      const std::string entry =
          fmt::format("{} records {} for {}", report_files[i], plugin.sha256, plugin.file);
      if (std::find(seen.begin(), seen.end(), entry) == seen.end()) seen.push_back(entry);
    }
  }
  return seen.empty() ? "no report records a plugin" : fmt::format("{}", fmt::join(seen, "; "));
}

bool recorded(const std::vector<Report>& reports, const std::string& sha256) {
  for (const Report& report : reports) {
    for (const PluginKernelRecord& plugin : report.provenance.plugins) {
      if (plugin.sha256 == sha256) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<evidence::PluginByteSource> plugin_byte_sources(
    const std::vector<std::string>& paths, const std::vector<Report>& reports,
    const std::vector<std::string>& report_files) {
  kernels::KernelRegistry scratch = kernels::KernelRegistry::with_builtin_kernels();
  std::vector<evidence::PluginByteSource> sources;
  for (const std::string& path : paths) {
    const kernels::LoadedPlugin loaded = kernels::load_plugin(path, scratch);
    if (!recorded(reports, loaded.sha256)) {
      throw std::invalid_argument(
          fmt::format("--plugin {}: its SHA-256 {} is no plugin's in the reports' "
                      "provenance.plugins ({})",
                      path, loaded.sha256, recorded_plugins(reports, report_files)));
    }
    for (const PluginKernelRecord& kernel : loaded.kernels) {
      // The count outlives `scratch`: the loader keeps it for the process.
      const OwnByteCount* count = scratch.find(kernel.kernel)->description.own_bytes;
      if (count != nullptr) sources.push_back({kernel.kernel, loaded.sha256, count});
    }
  }
  return sources;
}

void print_kernel_list(std::ostream& out) {
  for (const kernels::KernelEntry* entry : kernels::registry().entries()) {
    const KernelDescription& kernel = entry->description;
    std::vector<std::string_view> dtypes;
    for (DType dtype : {DType::fp16, DType::bf16, DType::fp32}) {
      if (kernel.dtypes.contains(dtype)) dtypes.push_back(to_string(dtype));
    }
    const std::string dtype_list = fmt::format("{}", fmt::join(dtypes, ","));
    const std::string head_dims = fmt::format("d={}", fmt::join(kernel.head_dims, ","));
    out << fmt::format("{:<22} {:<9} {:<15} {:<14} {}\n", kernel.name, to_string(kernel.direction),
                       dtype_list, head_dims, entry->origin);
  }
}

std::optional<SweepPlan> plan_with_plugins(const SweepOptions& sweep,
                                           const PluginOptions& plugins) {
  std::vector<PluginKernelRecord> loaded = load_plugins(plugins);
  if (plugins.list) {
    print_kernel_list(std::cout);
    return std::nullopt;
  }
  SweepPlan plan = plan_sweep(sweep);
  plan.plugins = std::move(loaded);
  return plan;
}

}  // namespace cfr::app
