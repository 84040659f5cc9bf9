#pragma once

// What every figure of a report can be, checked after the reader has the
// types right: a sample is a positive time, a dimension at least 1, a
// ceiling's bandwidth and peaks positive with a finite ridge, a count not
// negative. A report this tool writes always passes; a report that fails was
// edited or made by something else, and is refused before `audit` could call
// a negative sample consistent.

#include "roofline/core/errors.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

// Throws InputError naming the key path, e.g.
// "results[3].timing.samples_ms[2]: must be positive, found -1".
void check_report_values(const Report& report);

// The same for a ceiling (the report's, or one made from a `ceilings` file):
// "PATH.bandwidth_GBps: must be positive", "PATH.peak_TFLOPs.fp16_tensor:
// 1e+300 over 3350 GB/s gives a ridge of inf FLOP/byte".
void check_ceiling_values(const CeilingRecord& ceiling, std::string_view path);

}  // namespace cfr
