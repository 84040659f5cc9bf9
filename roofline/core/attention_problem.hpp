#pragma once

#include <compare>
#include <cstdint>

#include "roofline/core/dtype.hpp"

namespace cfr {

// One attention configuration: Q, K, V, O are [batch, heads, seq_len, head_dim].
struct AttentionProblem {
  std::int64_t batch = 1;
  std::int64_t heads = 8;
  std::int64_t seq_len = 1024;
  std::int64_t head_dim = 64;
  bool causal = false;
  DType dtype = DType::fp16;

  std::int64_t heads_total() const { return batch * heads; }

  friend auto operator<=>(const AttentionProblem&, const AttentionProblem&) = default;
};

}  // namespace cfr
