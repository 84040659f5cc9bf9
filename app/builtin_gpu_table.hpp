#pragma once

#include <string_view>

namespace cfr::app {

inline constexpr std::string_view builtin_gpu_table_origin = "configs/gpus.json (built in)";

std::string_view builtin_gpu_table_json();

}  // namespace cfr::app
