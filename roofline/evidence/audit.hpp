#pragma once

// `audit`: is a report what it says it is? Every figure of the figure table
// (figures.hpp) of every row is recomputed from the report's own inputs and
// raw samples through the functions the sweep used (model_figures over the
// row's kernel_record, summarize, achieved_figures), the auditable flag is
// re-derived with auditability_failures, and a historical row's printed
// figures are checked against each other. Pure: the caller reads the file.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "finding.hpp"
#include "roofline/model/own_byte_count.hpp"
#include "roofline/report/report.hpp"

namespace cfr::evidence {

// A figure and its recomputation agree when they differ by no more than
// absolute + relative * max(|a|, |b|). JSON keeps doubles exactly, so any
// difference beyond the last few bits is an edit, not rounding.
struct AuditTolerance {
  double relative = 1e-6;
  double absolute = 1e-9;
};

struct AuditResult {
  std::vector<Finding> findings;
  std::size_t rows = 0;
  std::string rows_are =
      "rows";  // what `rows` counts: "rows", or a ceilings report's "measurements"
  std::size_t figures_checked = 0;  // recomputed figures compared, over all rows

  std::size_t failing() const;
  bool consistent() const { return failing() == 0; }
};

// A plugin kernel's own byte count (traffic model `plugin`) that audit can
// ask again: `audit --plugin FILE` loads the plugin and gives one per kernel
// that counts its own bytes.
struct PluginByteSource {
  std::string kernel;
  std::string sha256;  // of the plugin file it was loaded from
  const OwnByteCount* count = nullptr;
};

// Never throws on a report that report_from_json accepted: a row whose
// figures cannot be recomputed (a shape too large to model, a traffic model
// the direction has not) is a finding.
// A `plugin` row's traffic.bytes is counted again by the source of its
// kernel whose SHA-256 is the one provenance.plugins records for it; without
// such a source it is taken as recorded (every other figure is still
// recomputed from it) and a note per kernel says so. A `plugin` row whose
// kernel provenance.plugins does not name is a mismatch.
AuditResult audit_report(const Report& report, const AuditTolerance& tolerance = {},
                         std::span<const PluginByteSource> plugins = {});

// What the audits of sweep and ceilings reports share: whether a reported
// figure and its recomputation agree, and the auditable flag against the
// failures auditability_failures() found (each failure of a report claiming
// `auditable: true` is a finding; a report saying false must say why).
bool agree(double reported, double recomputed, const AuditTolerance& tolerance);
void check_auditable_flag(const Provenance& provenance, const std::vector<std::string>& failures,
                          AuditResult& out);

// One line per finding, "FILE: where: message", then a verdict line.
std::string render_audit(const AuditResult& result, std::string_view file);

// {"consistent", "rows", "figures_checked", "findings": [{"kind", "where",
// "message", "fails"}]}
nlohmann::json to_json(const AuditResult& result);

}  // namespace cfr::evidence
