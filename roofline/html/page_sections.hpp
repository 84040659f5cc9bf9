#pragma once

// The parts of the HTML page that say what a report is and what was checked:
// its provenance, the audit made with the page, and a comparison of two
// reports. Each returns escaped HTML (text is data, never markup).

#include <string>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/compare.hpp"
#include "roofline/report/report.hpp"

namespace cfr::html {

// The tool and its commit, the source and `auditable` with its reasons, when,
// where and how it was made, the devices and their drivers, the ceiling, the
// plugins and the peers' software.
std::string provenance_section(const Report& report);

// The verdict of `audit` (consistent or how many findings fail), the figures
// it re-derived, and every finding, the failing ones first.
std::string audit_section(const evidence::AuditResult& audit);

// The verdict counts, the geometric mean and one sortable row per matched
// configuration (SAME, FASTER, SLOWER, AMBIGUOUS, FAILED, N/A).
std::string comparison_section(const evidence::Comparison& comparison);

}  // namespace cfr::html
