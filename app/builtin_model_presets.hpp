#pragma once

// configs/models.json, built into the binary as the GPU table is
// (builtin_gpu_table.hpp), parsed once.

#include <string_view>
#include <vector>

#include "roofline/model/model_presets.hpp"

namespace cfr::app {

inline constexpr std::string_view builtin_model_presets_origin = "configs/models.json (built in)";

std::string_view builtin_model_presets_json();

// Throws InputError where the built-in file is broken (a test keeps it
// whole).
const std::vector<ModelPreset>& builtin_model_presets();

}  // namespace cfr::app
