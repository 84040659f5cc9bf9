#pragma once

// One thing `audit` has to say about a report: where, what, and whether it
// makes the report fail.

#include <string>
#include <string_view>

namespace cfr::evidence {

enum class FindingKind {
  mismatch,      // a derived figure differs from its recomputation
  auditability,  // the auditable flag is not justified by the report's contents
  claim,         // a historical row's printed figures disagree with each other or our models
  unverifiable,  // a figure the report gives cannot be recomputed (no samples, absurd shape)
  note,          // context only: a failed row, the report's own stated reasons
};

std::string_view to_string(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::note;
  std::string where;    // "report" or "results[3] (fa1_wmma fp16 N=1024 d=64 causal)"
  std::string message;  // "timing.median_ms: report 3.2, recomputed 3"

  bool fails() const { return kind != FindingKind::note; }
};

}  // namespace cfr::evidence
