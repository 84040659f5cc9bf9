#include "finding.hpp"

namespace cfr::evidence {

std::string_view to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::mismatch: return "mismatch";
    case FindingKind::auditability: return "auditability";
    case FindingKind::claim: return "claim";
    case FindingKind::unverifiable: return "unverifiable";
    case FindingKind::note: return "note";
  }
  return "?";
}

}  // namespace cfr::evidence
