#include "roofline/model/model_presets.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cfr {

namespace {

using nlohmann::json;

class PresetReader {
 public:
  PresetReader(std::string_view origin, std::string model) : origin_(origin), model_(model) {}

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    throw InputError(fmt::format("{}: model '{}': field '{}' {}", origin_, model_, field, problem));
  }

  std::string string(const json& parent, std::string_view key) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(key, "is missing");
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      fail(key, "must be a non-empty string");
    }
    return it->get<std::string>();
  }

  // {"value": integer >= 1, "source": "document"}
  PresetFigure figure(const json& parent, std::string_view key) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(key, "is missing");
    if (!it->is_object()) fail(key, "must be an object");
    const auto value = it->find("value");
    if (value == it->end()) fail(fmt::format("{}.value", key), "is missing");
    if (!value->is_number_integer() || value->get<std::int64_t>() < 1 ||
        value->get<std::int64_t>() > (std::int64_t{1} << 20)) {
      fail(fmt::format("{}.value", key), "must be an integer from 1 to 2^20");
    }
    const auto source = it->find("source");
    if (source == it->end() || !source->is_string() ||
        source->get_ref<const std::string&>().empty()) {
      fail(fmt::format("{}.source", key), "must name where the figure comes from");
    }
    return {value->get<std::int64_t>(), source->get<std::string>()};
  }

 private:
  std::string_view origin_;
  std::string model_;
};

}  // namespace

std::vector<ModelPreset> parse_model_presets(const json& document, std::string_view origin) {
  const auto fail = [&](std::string_view problem) {
    throw InputError(fmt::format("{}: {}", origin, problem));
  };
  if (!document.is_object()) fail("expected an object");
  const auto schema = document.find("schema");
  if (schema == document.end() || *schema != "cuflash-roofline/models/v1") {
    fail("schema must be 'cuflash-roofline/models/v1'");
  }
  const auto models = document.find("models");
  if (models == document.end() || !models->is_array() || models->empty()) {
    fail("'models' must be a non-empty array");
  }
  std::vector<ModelPreset> presets;
  for (std::size_t i = 0; i < models->size(); ++i) {
    const json& entry = (*models)[i];
    if (!entry.is_object()) fail(fmt::format("models[{}] must be an object", i));
    const auto id = entry.find("id");
    const std::string label =
        id != entry.end() && id->is_string() ? id->get<std::string>() : fmt::format("#{}", i);
    const PresetReader read(origin, label);
    ModelPreset preset{read.string(entry, "id"), read.string(entry, "name"),
                       read.figure(entry, "heads"), read.figure(entry, "kv_heads"),
                       read.figure(entry, "head_dim")};
    if (preset.heads.value % preset.kv_heads.value != 0) {
      read.fail("kv_heads", fmt::format("{} does not divide heads {}", preset.kv_heads.value,
                                        preset.heads.value));
    }
    for (const ModelPreset& earlier : presets) {
      if (earlier.id == preset.id) read.fail("id", "appears twice");
    }
    presets.push_back(std::move(preset));
  }
  return presets;
}

const ModelPreset& find_preset(const std::vector<ModelPreset>& presets, std::string_view id) {
  std::vector<std::string_view> known;
  for (const ModelPreset& preset : presets) {
    if (preset.id == id) return preset;
    known.push_back(preset.id);
  }
  throw std::invalid_argument(
      fmt::format("--preset: unknown model '{}' (known: {})", id, fmt::join(known, ", ")));
}

}  // namespace cfr
