#pragma once

#include <stdexcept>

#include <nlohmann/json_fwd.hpp>

#include "roofline/report/report.hpp"

namespace cfr {

class Node;  // json_reader.hpp

// A report that does not follow the schema. what() names the key path, e.g.
// "results[3].timing.median_ms: expected a number".
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const ResultRow& row);
// A row's identity keys: kernel, direction, dtype, batch, heads, seq_len,
// head_dim, causal (also how `compare` writes a matched row).
nlohmann::json identity_json(const RowIdentity& row);

// The parts a ceilings report shares with a sweep report.
nlohmann::json to_json(const ToolInfo& tool);
nlohmann::json to_json(const Provenance& provenance);
nlohmann::json to_json(const DeviceRecord& device);
ToolInfo read_tool(const Node& tool);
Provenance read_provenance(const Node& provenance);
DeviceRecord read_device(const Node& device);

// Strict: every key the schema requires must be present with the right type;
// unknown keys are ignored. Throws ReportError.
Report report_from_json(const nlohmann::json& document);

}  // namespace cfr
