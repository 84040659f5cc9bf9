#pragma once

#include "roofline/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

// Prints the table and its legend (to stderr when a file output is "-", so
// stdout stays machine-readable) and writes --json/--csv/--md atomically.
void emit_report(const Report& report, const SweepOptions& options);

// The report JSON as written to disk.
std::string report_text(const Report& report);

}  // namespace cfr::app
