#pragma once

// The internal consistency of a historical row: the figures its source
// printed (ResultRow::claimed) checked against each other, within the
// rounding of the printed digits, and against our FLOP and byte models and
// the report's ceiling. This is how `audit` shows why the seed's table is not
// evidence, row by row.

#include <string_view>
#include <vector>

#include "finding.hpp"
#include "roofline/report/report.hpp"

namespace cfr::evidence {

// Empty when the row has no claimed figures or they hold together.
std::vector<Finding> check_claimed_figures(const ResultRow& row, const CeilingRecord& ceiling,
                                           std::string_view where);

}  // namespace cfr::evidence
