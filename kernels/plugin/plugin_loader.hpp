#pragma once

// Loads a plugin (kernels/plugin/cuflash_roofline_plugin.h, docs/plugins.md)
// into a kernel registry: opens the shared library, reads its descriptions,
// refuses what the tool cannot trust, and registers each kernel with a
// launcher that calls the plugin's launch function.

#include <string>
#include <vector>

#include "kernels/kernel_registry.hpp"
#include "roofline/report/report.hpp"

namespace cfr::kernels {

struct LoadedPlugin {
  std::string file;    // the path as given
  std::string sha256;  // of the file's bytes when it was loaded
  // One per kernel it brought, in its order: what a report's provenance names.
  std::vector<PluginKernelRecord> kernels;
};

// Throws std::invalid_argument with one line that starts with the path and
// says what is wrong: a file the system cannot read (in its words), not a
// shared library, no entry point, an ABI version other than 1 or this tool's,
// no kernels or a kernel_count that runs past the plugin's memory, or a
// description that breaks a rule (a null or empty name, a string or tiles
// array outside readable memory, an unknown dtype, compute unit or traffic
// model, a head dim or tile that cannot be, no launch function of its
// direction, traffic model `plugin` without hbm_bytes or hbm_bytes with
// another, a name that a built-in kernel or an earlier plugin has taken).
// Nothing of a refused plugin is registered. What the plugin prints while it
// is loaded and asked for its kernels goes to stderr, not stdout. The library
// stays loaded for the life of the process: its kernels are in the registry,
// and a kernel's own byte count (description.own_bytes) lives as long.
LoadedPlugin load_plugin(const std::string& path, KernelRegistry& registry);

}  // namespace cfr::kernels
