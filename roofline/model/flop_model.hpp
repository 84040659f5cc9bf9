#pragma once

// Floating-point operation counts of attention (docs/model.md derives each).

#include <optional>
#include <string_view>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr {

// How causal work is counted. `exact` counts the unmasked (query, key) pairs,
// N(N+1)/2 per head; `half` is the FlashAttention papers' dense / 2. Without a
// mask both equal the dense count.
enum class FlopConvention { exact, half };

constexpr std::string_view to_string(FlopConvention convention) {
  return convention == FlopConvention::exact ? "exact" : "half";
}
std::optional<FlopConvention> parse_flop_convention(std::string_view text);

struct FlopCounts {
  double dense = 0;    // every (query, key) pair, as if no mask
  double exact = 0;    // unmasked pairs only
  double half = 0;     // dense / 2 when causal, dense otherwise
  double softmax = 0;  // 5 FLOP per counted pair (max, subtract, exp, sum, divide), same convention
  FlopConvention convention = FlopConvention::exact;

  double counted() const { return convention == FlopConvention::exact ? exact : half; }
};

// Forward matmul FLOPs: QK^T and PV, 2 FLOP per multiply-add, 4·B·H·Nq·Nk·d
// dense (4·B·H·N²·d square). Backward counts 2.5x the forward matmuls (five
// N×N×d products to the forward's two; the FlashAttention convention),
// whatever a kernel actually recomputes.
FlopCounts attention_flops(const AttentionProblem& problem, Direction direction,
                           FlopConvention convention);

// Unmasked (query, key) pairs per head for a causal mask: N(N+1)/2.
double causal_pairs(double seq_len);

// Unmasked (query, key) pairs per head of `problem`: Nq·Nk without a mask;
// with the bottom-right causal mask query i sees min(Nk, max(0, i + Nk - Nq
// + 1)) keys, so Nq·(Nk - Nq) + Nq(Nq+1)/2 for Nq <= Nk and Nk(Nk+1)/2 for
// Nq > Nk (the first Nq - Nk queries see none).
double unmasked_pairs(const AttentionProblem& problem);

}  // namespace cfr
