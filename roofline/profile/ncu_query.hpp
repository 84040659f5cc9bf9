#pragma once

// What Nsight Compute says outside its CSV: the metric names a chip has
// (`ncu --query-metrics --chip <chip>`), and why it could not read counters.
// Pure: the caller runs ncu and passes its output.

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace cfr::ncu {

using MetricNames = std::set<std::string, std::less<>>;

// The base names (no .sum / .avg... suffix) in `ncu --query-metrics` output:
// the first word of each table line, without a "SM_A.TriageCompute." style
// prefix. Lines that are not metrics (the chip line, headers, rules,
// continued descriptions) are skipped.
MetricNames parse_query_metrics(std::string_view text);

// "dram__bytes_read.sum" -> "dram__bytes_read".
std::string_view metric_base(std::string_view metric);

bool chip_has(const MetricNames& names, std::string_view metric);

// One line saying why ncu read no counters, from its output: no permission
// (ERR_NVGPUCTRPERM), or another profiler holding the counters; empty when
// the output names neither.
std::optional<std::string> counters_unavailable_reason(std::string_view ncu_output);

}  // namespace cfr::ncu
