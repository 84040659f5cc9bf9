#pragma once

// `audit` of a `ceilings` report (results/h200/ceilings.json): what of it can
// be recomputed is, the rest is its provenance. Each figure's value is the
// median of its raw samples (the rule kernels/ceilings applied) and its
// fraction_of_datasheet is value / datasheet_value; a figure's energy figures
// (`ceilings --energy`) are ceiling_energy_figures over its kept counter
// readings, launches and work per launch; the auditable flag is
// re-derived with auditability_failures(CeilingsReport). Not checked: the
// samples and readings themselves (only a GPU can re-measure them), the work
// per launch (the kernel's own count, in its method) and the datasheet
// figure against the GPU table (the table may have changed since).

#include "audit.hpp"
#include "roofline/report/ceilings_report.hpp"

namespace cfr::evidence {

// Never throws on a report that ceilings_from_json accepted. `rows` counts
// the figures.
AuditResult audit_ceilings(const CeilingsReport& report, const AuditTolerance& tolerance = {});

}  // namespace cfr::evidence
