#pragma once

// The shapes the models accept, in one place: every dimension in 1..2^31 − 1
// (an int, which the kernels' launch shapes are) and
// the byte size of one fp32 [B, H, N, d] tensor inside 64 bits, so that no
// product the models, the planner or the measuring code form can wrap (a
// batch × heads that wraps to 0 would give a row of zero FLOPs and bytes).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "roofline/core/attention_problem.hpp"

namespace cfr {

inline constexpr std::int64_t max_problem_dimension = std::numeric_limits<std::int32_t>::max();

// Empty when the problem is inside the limits; otherwise one line naming the
// dimension or the product that is not, e.g.
// "batch × heads × seq_len × head_dim × 4 bytes overflows 64 bits".
std::optional<std::string> problem_out_of_range(const AttentionProblem& problem);

}  // namespace cfr
