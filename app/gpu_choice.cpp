#include "gpu_choice.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "builtin_gpu_table.hpp"
#include "report_file.hpp"
#include "roofline/core/strict_json.hpp"

namespace cfr::app {

GpuTable load_gpu_table(const std::string& path) {
  if (path.empty()) {
    return parse_gpu_table(parse_strict_json(builtin_gpu_table_json()), builtin_gpu_table_origin);
  }
  return parse_gpu_table(read_json_file(path), path);
}

const GpuSpec& choose_gpu(const GpuTable& table, const std::string& requested,
                          const std::optional<LocalDevice>& local) {
  if (requested == "auto") {
    if (!local) {
      throw std::runtime_error(
          fmt::format("--gpu auto: no CUDA device here to match; name one of: {}",
                      fmt::join(table.ids(), ", ")));
    }
    const GpuSpec* match = table.match_device(local->name, local->compute_capability);
    if (match == nullptr) {
      throw std::runtime_error(fmt::format(
          "--gpu auto: no row of {} matches '{}' (cc {}); name one of: {} or add a row with "
          "--gpu-table",
          table.origin, local->name, local->compute_capability, fmt::join(table.ids(), ", ")));
    }
    return *match;
  }
  const GpuSpec* gpu = table.find(requested);
  if (gpu == nullptr) {
    throw std::runtime_error(fmt::format("--gpu {}: unknown GPU; known: {}, auto", requested,
                                         fmt::join(table.ids(), ", ")));
  }
  return *gpu;
}

}  // namespace cfr::app
