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
// shared library, no entry point, an ABI version outside 1 to this tool's,
// no kernels or a kernel_count that runs past the plugin's memory, or a
// description that breaks a rule (a null or empty name, a string or tiles
// array outside readable memory, an unknown dtype, compute unit, shape bit or
// traffic model, a head dim, tile or max_q_len that cannot be, no launch
// function of its direction, traffic model `plugin` without hbm_bytes or
// hbm_bytes with another, shape bits on a backward kernel, a name that a
// built-in kernel or an earlier plugin has taken). A description is read by
// its plugin's version's size; a kernel of a version before 3 takes square
// shapes only, and a row of another shape is skipped with the reason naming
// the plugin and its version (ShapeSupport::served_shapes_reason).
// Nothing of a refused plugin is registered. What the plugin prints while it
// is loaded and asked for its kernels goes to stderr, not stdout. The library
// stays loaded for the life of the process: its kernels are in the registry,
// and a kernel's own byte count (description.own_bytes) lives as long.
LoadedPlugin load_plugin(const std::string& path, KernelRegistry& registry);

}  // namespace cfr::kernels
