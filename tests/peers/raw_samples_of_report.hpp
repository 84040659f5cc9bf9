#pragma once

// The raw samples a peer's report was computed from, taken back out of it:
// what `import-samples` needs to compute the report again (docs/peers.md,
// "Re-importing a report"). A test helper: the acceptance of issue 21 is that
// every committed peer report re-imports identical in every figure.

#include <string>
#include <vector>

#include "roofline/evidence/raw_samples.hpp"
#include "roofline/report/report.hpp"

struct Reimport {
  cfr::evidence::RawSamples raw;
  // import-samples' options that choose the report's ceiling and FLOP
  // convention again: --gpu, --ceiling datasheet, --flop-convention and,
  // unless the ceiling is the built-in table's, --gpu-table with the table
  // path the report names (relative to the source root).
  std::vector<std::string> options;
};

// Throws std::invalid_argument for what a report cannot give back: a ceiling
// from a `ceilings` file (the file is not in the report), a backend whose rows
// disagree about its arithmetic, two FLOP conventions.
Reimport raw_samples_of_report(const cfr::Report& report);
