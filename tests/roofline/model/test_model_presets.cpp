#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/model/model_presets.hpp"

// configs/models.json, the --preset table: every figure sourced, K/V heads
// dividing the query heads. Expected shapes from each model's config.json
// (the file's own sources).

using namespace cfr;
using nlohmann::json;

namespace {

json committed_presets() {
  std::ifstream in(std::string(CFR_SOURCE_ROOT) + "/configs/models.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string refusal(const json& document) {
  try {
    parse_model_presets(document, "models.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("the committed presets parse, each figure with its source") {
  const std::vector<ModelPreset> presets = parse_model_presets(committed_presets(), "models.json");
  REQUIRE(presets.size() >= 5);
  const ModelPreset& llama = find_preset(presets, "llama3-8b");
  CHECK(llama.heads.value == 32);
  CHECK(llama.kv_heads.value == 8);
  CHECK(llama.head_dim.value == 128);
  CHECK(find_preset(presets, "qwen2.5-7b").heads.value == 28);
  CHECK(find_preset(presets, "qwen2.5-7b").kv_heads.value == 4);
  for (const ModelPreset& preset : presets) {
    INFO(preset.id);
    CHECK(preset.heads.value % preset.kv_heads.value == 0);
    for (const PresetFigure* figure : {&preset.heads, &preset.kv_heads, &preset.head_dim}) {
      CHECK(figure->source.find("config.json") != std::string::npos);
    }
  }
  // An unknown id is the caller's value (error rule 1: std::invalid_argument).
  CHECK_THROWS_AS(find_preset(presets, "gpt5"), std::invalid_argument);
  CHECK_THROWS_WITH(find_preset(presets, "gpt5"),
                    Catch::Contains("unknown model 'gpt5'") && Catch::Contains("llama3-8b"));
}

TEST_CASE("a preset table is refused naming the model and the field") {
  const json good = committed_presets();
  json unsourced = good;
  unsourced["models"][0]["heads"].erase("source");
  CHECK(refusal(unsourced) ==
        "models.json: model 'llama3-8b': field 'heads.source' must name where the figure comes "
        "from");
  json indivisible = good;
  indivisible["models"][0]["kv_heads"]["value"] = 5;
  CHECK(refusal(indivisible) ==
        "models.json: model 'llama3-8b': field 'kv_heads' 5 does not divide heads 32");
  json twice = good;
  twice["models"].push_back(good["models"][0]);
  CHECK(refusal(twice) == "models.json: model 'llama3-8b': field 'id' appears twice");
  json zero = good;
  zero["models"][1]["head_dim"]["value"] = 0;
  CHECK(
      refusal(zero) ==
      "models.json: model 'llama3-70b': field 'head_dim.value' must be an integer from 1 to 2^20");
  json schema = good;
  schema["schema"] = "other";
  CHECK(refusal(schema) == "models.json: schema must be 'cuflash-roofline/models/v1'");
}
