#pragma once

#include <stdexcept>

#include <nlohmann/json_fwd.hpp>

#include "roofline/core/errors.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

class Node;  // json_reader.hpp

nlohmann::json to_json(const Report& report);
nlohmann::json to_json(const ResultRow& row);
// A row's identity keys: kernel, direction and the problem's (also how
// `compare` writes a matched row).
nlohmann::json identity_json(const RowIdentity& row);

// The problem's keys: dtype, batch, heads, seq_len, head_dim, causal, and
// kv_len, kv_heads and page_size where the problem has them. A row holds
// them beside its kernel; `import-samples --plan` lists problems so, and a
// raw-samples document names each row's problem so (raw_samples.hpp).
nlohmann::json problem_json(const AttentionProblem& problem);
AttentionProblem read_problem(const Node& problem);

// The raw part of a timing: the samples and what the cold timer recorded
// about them (clocks, throttling, stop reason); the summary (median_ms ...)
// is figures, read and written with the others (figures.hpp). A raw-samples
// document's timing is this object.
nlohmann::json timing_json(const Timing& timing);
Timing read_timing(const Node& timing);

// A timing taken in the profiled process, or a timer floor's events
// (profile.process_timing; profile-child --timing-out writes its rows and
// floors as these objects).
nlohmann::json process_timing_json(const ProcessTiming& timing);
ProcessTiming read_process_timing(const Node& timing);

// The parts a ceilings report shares with a sweep report.
// An energy's raw part: what measured it, its reason, the counter's readings
// as [seconds, millijoules] pairs, the probes, the idle readings; its derived
// figures are the row's (figures.hpp) or the ceiling's (ceiling_energy.hpp).
nlohmann::json energy_json(const Energy& energy);
Energy read_energy(const Node& energy);
nlohmann::json to_json(const ToolInfo& tool);
nlohmann::json to_json(const Provenance& provenance);
nlohmann::json to_json(const DeviceRecord& device);
ToolInfo read_tool(const Node& tool);
Provenance read_provenance(const Node& provenance);
DeviceRecord read_device(const Node& device);

// Strict: every key the schema requires must be present with the right type;
// unknown keys are ignored. Throws InputError.
Report report_from_json(const nlohmann::json& document);

}  // namespace cfr
