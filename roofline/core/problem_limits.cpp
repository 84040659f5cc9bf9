#include "roofline/core/problem_limits.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "roofline/core/checked_math.hpp"

namespace cfr {

std::optional<std::string> problem_out_of_range(const AttentionProblem& p) {
  const std::array<std::pair<const char*, std::int64_t>, 4> dimensions{
      {{"batch", p.batch}, {"heads", p.heads}, {"seq_len", p.seq_len}, {"head_dim", p.head_dim}}};
  for (const auto& [name, value] : dimensions) {
    if (value < 1 || value > max_problem_dimension) {
      return fmt::format("{} = {} is outside 1..{}", name, value, max_problem_dimension);
    }
  }
  constexpr std::int64_t widest_element_bytes = 4;
  if (!checked_product(p.batch, p.heads, p.seq_len, p.head_dim, widest_element_bytes)) {
    return fmt::format(
        "batch × heads × seq_len × head_dim × 4 bytes = {} × {} × {} × {} × 4 overflows 64 bits",
        p.batch, p.heads, p.seq_len, p.head_dim);
  }
  return std::nullopt;
}

}  // namespace cfr
