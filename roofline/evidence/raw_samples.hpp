#pragma once

// A peer's raw measurements (schema "cuflash-roofline/raw-samples/v1",
// docs/peers.md): what a script that times someone else's kernels inside its
// own framework (peers/torch_sdpa.py) measured, and nothing derived from it.
// `import-samples` turns one into a report/v1 document, computing every
// figure with the functions `sweep` uses, so a peer's figures have one source.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/model/flop_model.hpp"
#include "roofline/model/kernel_description.hpp"
#include "roofline/report/measured_row.hpp"
#include "roofline/report/report.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr::evidence {

inline constexpr std::string_view raw_samples_schema = "cuflash-roofline/raw-samples/v1";

// A peer's kernel: the name its rows get, and how its arithmetic maps to a
// compute unit (fp32_simt, or tensor_for_dtype: the tensor unit of fp16 and
// bf16). It is charged the compulsory bytes: its internals are not ours to
// claim.
struct RawBackend {
  std::string kernel;
  ArithmeticPath arithmetic = ArithmeticPath::tensor_for_dtype;
};

// The output compared with the fp32 reference, as measured: each tensor's
// errors and max |ref| (CheckResult), not yet judged.
struct RawCheck {
  std::string reference;  // what the output was compared with
  std::vector<CheckedTensor> tensors;
};

// One configuration the peer tried. `ok`: it ran, its output was checked and
// (unless it never started in time) timed; `skipped` and `failed` say why in
// `reason`, with no check or timing. `direction`: what was timed, the
// forward or (optional key "direction": "backward", absent in every file
// written before it) the backward alone, its gradients dQ, dK, dV checked.
struct RawRow {
  std::string kernel;  // one of the document's backends
  Direction direction = Direction::forward;
  AttentionProblem problem;
  int device = 0;
  RowStatus status = RowStatus::ok;
  std::string reason;
  std::optional<RawCheck> check;
  // The raw part of a report's timing (timing_json): samples, clocks,
  // throttling, stop reason. Absent: no sample was taken.
  std::optional<Timing> timing;
};

struct RawProvenance {
  std::string created_utc;
  std::string command;
  std::string host;
  std::map<std::string, std::string> environment;  // the software measured with; not empty
  std::vector<std::string> reasons;                // whole-run warnings from the measuring side
  // False when the run was interrupted, or in a copy written while it ran.
  bool finished = true;
};

struct RawSamples {
  ToolInfo tool;  // the script: its name, version and the tree's commit
  RawProvenance provenance;
  std::vector<DeviceRecord> devices;
  std::vector<RawBackend> backends;
  std::vector<RawRow> rows;
};

// Strict like report_from_json: throws InputError naming the key path. A
// row must name one of the backends and one of the devices; a backend may
// not bear a built-in kernel's name (its figures would be that kernel's).
RawSamples raw_samples_from_json(const nlohmann::json& document);
nlohmann::json to_json(const RawSamples& raw);

// The report of `raw` against `ceiling`: per row, model_row with the peer's
// kernel in the row's direction (every FLOP, byte and roofline figure, a
// backward row's as the sweep's backward rows count them; a row the ceiling
// has no peak for, or a backward row of a shape the backward models lack, is
// skipped, its measurement dropped), then the measuring side's
// status, correctness_record's verdict on the check (a failed check fails
// the row, untimed, as the sweep never times one) and record_timing's
// summary and achieved figures. Provenance: the raw one, source measured,
// reasons = the raw reasons, `ceiling_reasons`, then each failed condition
// of auditability_failures; auditable when there is none and the run
// finished. Throws InputError where the report would not read back
// (check_report_values: a sample <= 0, two rows of one configuration).
Report samples_report(const RawSamples& raw, const CeilingRecord& ceiling,
                      FlopConvention convention, const std::vector<std::string>& ceiling_reasons);

}  // namespace cfr::evidence
