#pragma once

// Published models' attention shapes (configs/models.json), for --preset:
// query heads, K/V heads and head dim, each with the source it was read from.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/core/errors.hpp"

namespace cfr {

struct PresetFigure {
  std::int64_t value = 0;
  std::string source;
};

struct ModelPreset {
  std::string id;  // what --preset takes: "llama3-8b"
  std::string name;
  PresetFigure heads;
  PresetFigure kv_heads;  // a divisor of heads
  PresetFigure head_dim;
};

// Throws InputError naming `origin`, the model and the field for a
// schema other than cuflash-roofline/models/v1, a missing or empty field, a
// figure that is not a positive integer with a source, kv_heads that do not
// divide heads, or an id used twice.
std::vector<ModelPreset> parse_model_presets(const nlohmann::json& document,
                                             std::string_view origin);

// The preset of that id; throws std::invalid_argument listing the known ids.
const ModelPreset& find_preset(const std::vector<ModelPreset>& presets, std::string_view id);

}  // namespace cfr
