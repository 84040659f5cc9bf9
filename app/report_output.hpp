#pragma once

#include "output_files.hpp"
#include "roofline/report/report.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

// The targets of --json, --csv, --md and --html, checked before the command does any
// work (output_files.hpp); none may be --gpu-table or one of `inputs`.
OutputFiles report_outputs(const SweepOptions& options,
                           const std::vector<std::string>& inputs = {});

// Writes every output together, then prints the table and its legend (to
// stderr when an output is stdout, so stdout stays machine-readable).
void emit_report(const Report& report, const OutputFiles& outputs);

// The report JSON as written to disk.
std::string report_text(const Report& report);

}  // namespace cfr::app
