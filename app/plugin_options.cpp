#include "plugin_options.hpp"

#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/kernel_registry.hpp"
#include "kernels/plugin/plugin_loader.hpp"

namespace cfr::app {

void add_plugin_options(CLI::App& command, PluginOptions& options) {
  command.add_option("--plugin", options.paths,
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
