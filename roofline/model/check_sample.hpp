#pragma once

// Which rows a row's correctness check compares: every row, or, where the
// tiled references (kernels/tiled_reference.hpp) would take longer than the
// check's budget, rows drawn at random from a seed and stated in the row's
// correctness record (docs/checks.md). Never a silent skip: a sampled check
// still compares at least min_sampled_rows rows a head, however far that
// runs over the budget.

#include <cstdint>
#include <optional>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_description.hpp"

namespace cfr {

struct CheckSample {
  std::uint64_t seed = 0;       // sampled_rows' seed: query rows seed, key rows seed + 1
  std::int64_t query_rows = 0;  // rows of O, LSE, dQ compared in every (batch, head)
  std::int64_t key_rows = 0;    // rows of dK, dV compared in every (batch, K/V head); 0 forward

  friend bool operator==(const CheckSample&, const CheckSample&) = default;
};

// The rate the tiled references are assumed to reach on the H200 at least
// (the [scale] GPU test requires it of them), and the budget a check's
// reference gets by default: 25 s at that rate, so that a backward row, whose
// problem also gets its forward reference, checks in under a minute.
inline constexpr double assumed_reference_flops_per_s = 4e12;
inline constexpr double default_check_budget_flops = 25 * assumed_reference_flops_per_s;
inline constexpr std::int64_t min_sampled_rows = 256;

// FLOPs the tiled references spend on `problem` (2 per multiply-add, over
// the unmasked pairs) computing `query_fraction` of its query rows and, for
// the backward, `key_fraction` of its key rows. Forward: S and P V over the
// rows, 4·pairs·d. Backward: L and D of every row (a forward pass, 4·pairs·d),
// then dQ (S, dP, dS K: 6·pairs·d) and dK, dV (S, dP, P^T dO, dS^T Q:
// 8·pairs·d) over their fractions; per head.
double reference_flops(const AttentionProblem& problem, Direction direction,
                       double query_fraction = 1, double key_fraction = 1);

// nullopt when the full check fits in `budget_flops`; else the sample whose
// reference fits, with min_sampled_rows a head at least (as many query and
// key rows as the problem has at most).
std::optional<CheckSample> plan_check_sample(const AttentionProblem& problem, Direction direction,
                                             double budget_flops, std::uint64_t seed);

// `count` distinct indices of [0, total), sorted, drawn by selection
// sampling (Knuth's Algorithm S) over a splitmix64 stream from `seed`: the
// same rows for the same arguments anywhere. All of them when count >= total.
std::vector<int> sampled_rows(std::int64_t total, std::int64_t count, std::uint64_t seed);

// The query rows and key rows `sample` names in `problem`.
std::vector<int> sampled_query_rows(const AttentionProblem& problem, const CheckSample& sample);
std::vector<int> sampled_key_rows(const AttentionProblem& problem, const CheckSample& sample);

}  // namespace cfr
