#include "roofline/model/flop_model.hpp"

namespace cfr {

namespace {
constexpr double backward_to_forward_matmuls = 2.5;
constexpr double softmax_flops_per_pair = 5.0;
}  // namespace

std::optional<FlopConvention> parse_flop_convention(std::string_view text) {
  if (text == "exact") return FlopConvention::exact;
  if (text == "half") return FlopConvention::half;
  return std::nullopt;
}

double causal_pairs(double seq_len) {
  return seq_len * (seq_len + 1) / 2;
}

double unmasked_pairs(const AttentionProblem& problem) {
  const double queries = static_cast<double>(problem.seq_len);
  const double keys = static_cast<double>(problem.keys());
  if (!problem.causal) return queries * keys;
  if (queries <= keys) return queries * (keys - queries) + causal_pairs(queries);
  return causal_pairs(keys);
}

FlopCounts attention_flops(const AttentionProblem& problem, Direction direction,
                           FlopConvention convention) {
  const double heads = static_cast<double>(problem.heads_total());
  const double d = static_cast<double>(problem.head_dim);
  const double scale = direction == Direction::backward ? backward_to_forward_matmuls : 1.0;

  const double dense_pairs =
      static_cast<double>(problem.seq_len) * static_cast<double>(problem.keys());
  const double exact_pairs = unmasked_pairs(problem);
  const double half_pairs = problem.causal ? dense_pairs / 2 : dense_pairs;
  const double flops_per_pair = 4 * d * scale;

  FlopCounts counts;
  counts.convention = convention;
  counts.dense = heads * dense_pairs * flops_per_pair;
  counts.exact = heads * exact_pairs * flops_per_pair;
  counts.half = heads * half_pairs * flops_per_pair;
  const double counted_pairs = convention == FlopConvention::exact ? exact_pairs : half_pairs;
  counts.softmax = heads * counted_pairs * softmax_flops_per_pair;
  return counts;
}

}  // namespace cfr
