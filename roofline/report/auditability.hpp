#pragma once

// When may a report say `auditable: true`? Only when it is a measurement whose
// every passing row was checked against the reference and carries its raw
// samples, made by a clean commit, with the environment recorded. The sweep
// sets the flag from this function and `audit` re-checks it with the same one;
// likewise `ceilings` for its report.

#include <string>
#include <vector>

#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

// Each condition that fails, as one sentence; empty means auditable.
std::vector<std::string> auditability_failures(const Report& report);

// The same for a `ceilings` report: a measurement by a clean commit with the
// environment and the device recorded, every figure with its raw samples.
// `ceilings` sets the flag from it and `audit` re-checks it.
std::vector<std::string> auditability_failures(const CeilingsReport& report);

}  // namespace cfr
