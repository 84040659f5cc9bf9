#pragma once

#include <compare>
#include <cstdint>
#include <tuple>

#include "dtype.hpp"

namespace cfr {

// One attention configuration. Q and O are [batch, heads, seq_len,
// head_dim]: seq_len is the query length. K and V are [batch, kv_heads,
// kv_len, head_dim], or a paged cache of page_size tokens a page. kv_len,
// kv_heads and page_size are 0 for what square self-attention has: as many
// keys as queries, as many K/V heads as query heads (GQA and MQA have fewer,
// a divisor of heads), a contiguous cache. Causal with kv_len > seq_len is
// bottom-right aligned: query i sees keys 0 .. i + kv_len - seq_len.
struct AttentionProblem {
  std::int64_t batch = 1;
  std::int64_t heads = 8;
  std::int64_t seq_len = 1024;
  std::int64_t head_dim = 64;
  bool causal = false;
  DType dtype = DType::fp16;
  std::int64_t kv_len = 0;
  std::int64_t kv_heads = 0;
  std::int64_t page_size = 0;

  constexpr std::int64_t keys() const { return kv_len > 0 ? kv_len : seq_len; }
  constexpr std::int64_t key_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  constexpr std::int64_t heads_total() const { return batch * heads; }
  constexpr std::int64_t kv_heads_total() const { return batch * key_heads(); }
  // Query heads per K/V head (1 without GQA).
  constexpr std::int64_t group() const { return heads / key_heads(); }
  constexpr bool paged() const { return page_size > 0; }
  // What every kernel takes: as many keys and K/V heads as queries and heads,
  // a contiguous cache.
  constexpr bool square() const { return keys() == seq_len && key_heads() == heads && !paged(); }

  // The fields with 0 spelled out: kv_len 0 and kv_len = seq_len are one
  // problem, and compare as one.
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, DType,
                         std::int64_t, std::int64_t, std::int64_t>;
  Key key() const {
    return {batch, heads, seq_len, head_dim, causal, dtype, keys(), key_heads(), page_size};
  }
  friend bool operator==(const AttentionProblem& a, const AttentionProblem& b) {
    return a.key() == b.key();
  }
  friend auto operator<=>(const AttentionProblem& a, const AttentionProblem& b) {
    return a.key() <=> b.key();
  }
};

}  // namespace cfr
