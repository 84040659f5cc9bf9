#pragma once

// The GPU table the binary carries, configs/gpus.json, read from the source
// tree (CFR_SOURCE_ROOT): a test derives the ids, their count and the
// messages that list them from the file, so a new GPU is one entry there and
// no test to edit (docs/model.md, "Adding a GPU").

#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cfr::test {

inline nlohmann::json shipped_gpu_table() {
  std::ifstream in(std::string(CFR_SOURCE_ROOT) + "/configs/gpus.json");
  return nlohmann::json::parse(in);
}

// The ids in the file's order, which is the order every listing prints.
inline std::vector<std::string> shipped_gpu_ids() {
  const nlohmann::json table = shipped_gpu_table();
  std::vector<std::string> ids;
  for (const nlohmann::json& gpu : table["gpus"]) ids.push_back(gpu["id"]);
  return ids;
}

// A table's row by its id (a GPU table, or `gpus --json`'s output), so a test
// holds wherever the file lists the GPU.
template <typename Json>
Json& gpu_row(Json& table, std::string_view id) {
  for (Json& gpu : table.at("gpus")) {
    if (gpu.at("id") == id) return gpu;
  }
  throw std::invalid_argument("the GPU table has no row " + std::string(id));
}

// "v100, a100, ...": ids as the tool lists them in a message.
inline std::string listed(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ", ") + id;
  return out;
}

// The file with one entry more, as a contributor would add a GPU: "zz9000",
// NVIDIA ZZ 9000, compute capability 12.0, ncu chip gz100, the H200's figures
// but 8000 GB/s, so its ridges are its own (fp16 tensor: 989.4 / 8000 ->
// 123.7 FLOP/B).
inline nlohmann::json table_with_made_up_gpu() {
  nlohmann::json table = shipped_gpu_table();
  nlohmann::json gpu = gpu_row(table, "h200");
  gpu["id"] = "zz9000";
  gpu["name"] = "NVIDIA ZZ 9000";
  gpu["match_names"] = {"ZZ 9000"};
  gpu["compute_capability"]["value"] = "12.0";
  gpu["memory_bandwidth_GBps"] = {{"value", 8000}, {"source", "a test's made-up datasheet"}};
  gpu["ncu_chip"] = {{"value", "gz100"}, {"source", "a test's made-up chip"}};
  table["gpus"].push_back(gpu);
  return table;
}

}  // namespace cfr::test
