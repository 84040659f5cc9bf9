#include "roofline/model/check_sample.hpp"

#include <algorithm>
#include <cmath>

#include "roofline/model/flop_model.hpp"

namespace cfr {

namespace {

// One (query, key) pair's multiply-adds over d, for every head, at 2 FLOP each.
double flops_per_pass(const AttentionProblem& p) {
  return 2 * unmasked_pairs(p) * static_cast<double>(p.head_dim) *
         static_cast<double>(p.heads_total());
}

std::int64_t rows_for(double fraction, std::int64_t total) {
  const auto wanted = static_cast<std::int64_t>(std::ceil(fraction * static_cast<double>(total)));
  return std::min(total, std::max(min_sampled_rows, wanted));
}

}  // namespace

double reference_flops(const AttentionProblem& p, Direction direction, double query_fraction,
                       double key_fraction) {
  const double pass = flops_per_pass(p);
  if (direction == Direction::forward) return 2 * pass * query_fraction;
  return 2 * pass + 3 * pass * query_fraction + 4 * pass * key_fraction;
}

std::optional<CheckSample> plan_check_sample(const AttentionProblem& p, Direction direction,
                                             double budget_flops, std::uint64_t seed) {
  if (reference_flops(p, direction) <= budget_flops) return std::nullopt;
  // The part a sample does not shrink (the backward's L and D of every row),
  // then the fraction of the rest the budget leaves.
  const double fixed = reference_flops(p, direction, 0, 0);
  const double fraction =
      std::max(0.0, budget_flops - fixed) / (reference_flops(p, direction) - fixed);
  CheckSample sample{seed, rows_for(fraction, p.seq_len), 0};
  if (direction == Direction::backward) sample.key_rows = rows_for(fraction, p.keys());
  // A problem of fewer rows than the minimum is checked in full.
  if (sample.query_rows == p.seq_len &&
      (direction == Direction::forward || sample.key_rows == p.keys())) {
    return std::nullopt;
  }
  return sample;
}

std::vector<int> sampled_rows(std::int64_t total, std::int64_t count, std::uint64_t seed) {
  std::vector<int> rows;
  rows.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(count, total))));
  std::uint64_t state = seed;
  const auto uniform = [&state] {  // splitmix64, top 53 bits as a double in [0, 1)
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
  };
  // Row i is taken with probability (still wanted) / (still left).
  std::int64_t wanted = std::min(count, total);
  for (std::int64_t i = 0; i < total && wanted > 0; ++i) {
    if (static_cast<double>(total - i) * uniform() < static_cast<double>(wanted)) {
      rows.push_back(static_cast<int>(i));
      --wanted;
    }
  }
  return rows;
}

std::vector<int> sampled_query_rows(const AttentionProblem& p, const CheckSample& sample) {
  return sampled_rows(p.seq_len, sample.query_rows, sample.seed);
}

std::vector<int> sampled_key_rows(const AttentionProblem& p, const CheckSample& sample) {
  return sampled_rows(p.keys(), sample.key_rows, sample.seed + 1);
}

}  // namespace cfr
