#pragma once

// Which GPU table row (and so which ceiling) a command uses.

#include <optional>
#include <string>

#include "roofline/model/gpu_table.hpp"

namespace cfr::app {

// The local CUDA device, as far as choosing a table row needs it.
struct LocalDevice {
  std::string name;
  std::string compute_capability;
};

// The ceiling `model` uses by default, and `sweep --gpu auto` on a machine
// with no device to match: the model needs some roof, and says which.
inline constexpr const char* model_default_gpu = "a100";

// Empty path: the table built into the binary. Throws with a one-line message.
GpuTable load_gpu_table(const std::string& path);

// "auto" picks the row matching `local`; a name picks that row. Throws
// std::runtime_error listing the known names when nothing fits.
const GpuSpec& choose_gpu(const GpuTable& table, const std::string& requested,
                          const std::optional<LocalDevice>& local);

}  // namespace cfr::app
