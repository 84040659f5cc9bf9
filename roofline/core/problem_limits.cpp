#include "roofline/core/problem_limits.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "roofline/core/checked_math.hpp"

namespace cfr {

std::optional<std::string> problem_out_of_range(const AttentionProblem& p) {
  const std::array<std::pair<const char*, std::int64_t>, 6> dimensions{
      {{"batch", p.batch},
       {"heads", p.heads},
       {"seq_len", p.seq_len},
       {"head_dim", p.head_dim},
       {"kv_len", p.keys()},
       {"kv_heads", p.key_heads()}}};
  if (p.kv_len < 0 || p.kv_heads < 0) {
    return fmt::format("kv_len = {} and kv_heads = {} must be positive (or 0: as seq_len, heads)",
                       p.kv_len, p.kv_heads);
  }
  for (const auto& [name, value] : dimensions) {
    if (value < 1 || value > max_problem_dimension) {
      return fmt::format("{} = {} is outside 1..{}", name, value, max_problem_dimension);
    }
  }
  if (p.page_size < 0 || p.page_size > max_problem_dimension) {
    return fmt::format("page_size = {} is outside 0..{}", p.page_size, max_problem_dimension);
  }
  if (p.heads % p.key_heads() != 0) {
    return fmt::format("heads = {} is not a multiple of kv_heads = {}", p.heads, p.key_heads());
  }
  if (p.causal && p.seq_len > p.keys()) {
    return fmt::format(
        "a causal mask with seq_len = {} queries over kv_len = {} keys leaves the first {} "
        "queries no key (the mask is bottom-right aligned): refused",
        p.seq_len, p.keys(), p.seq_len - p.keys());
  }
  constexpr std::int64_t widest_element_bytes = 4;
  if (!checked_product(p.batch, p.heads, p.seq_len, p.head_dim, widest_element_bytes)) {
    return fmt::format(
        "batch × heads × seq_len × head_dim × 4 bytes = {} × {} × {} × {} × 4 overflows 64 bits",
        p.batch, p.heads, p.seq_len, p.head_dim);
  }
  if (!checked_product(p.batch, p.key_heads(), p.keys(), p.head_dim, widest_element_bytes)) {
    return fmt::format(
        "batch × kv_heads × kv_len × head_dim × 4 bytes = {} × {} × {} × {} × 4 overflows 64 bits",
        p.batch, p.key_heads(), p.keys(), p.head_dim);
  }
  return std::nullopt;
}

}  // namespace cfr
