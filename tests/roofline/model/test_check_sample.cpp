// The sub-sampled check's plan (roofline/model/check_sample.hpp): the
// references' FLOPs from the pass counts written there, the budget rule, and
// the rows a seed draws; the numbers are the shapes (issue 19).
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "roofline/model/check_sample.hpp"

using namespace cfr;

namespace {

AttentionProblem long_problem(std::int64_t seq_len, bool causal = false) {
  return AttentionProblem{1, 4, seq_len, 64, causal, DType::fp16};
}

}  // namespace

TEST_CASE("reference FLOPs: 2 passes forward, 2 + 3 + 4 backward, over the unmasked pairs") {
  const AttentionProblem p = long_problem(131072);
  const double pass = 2.0 * 131072.0 * 131072.0 * 64 * 4;  // 2 FLOP a multiply-add, 4 heads
  CHECK(reference_flops(p, Direction::forward) == 2 * pass);
  CHECK(reference_flops(p, Direction::forward, 0.25) == 0.5 * pass);
  CHECK(reference_flops(p, Direction::backward) == 9 * pass);
  CHECK(reference_flops(p, Direction::backward, 0, 0) == 2 * pass);  // L and D of every row
  CHECK(reference_flops(p, Direction::backward, 1, 0) == 5 * pass);
  // Causal: the bottom-right mask's pairs, N(N+1)/2 square.
  const double causal_pass = 2.0 * 131072.0 * 131073.0 / 2 * 64 * 4;
  CHECK(reference_flops(long_problem(131072, true), Direction::forward) == 2 * causal_pass);
}

TEST_CASE("the issue's rows are checked in full under the default budget") {
  // Forward at N262144 (7.0e13 FLOPs) and backward at N131072 (7.9e13), B1 H4 d64.
  CHECK(reference_flops(long_problem(262144), Direction::forward) < default_check_budget_flops);
  CHECK(reference_flops(long_problem(131072), Direction::backward) < default_check_budget_flops);
  CHECK_FALSE(
      plan_check_sample(long_problem(262144), Direction::forward, default_check_budget_flops, 7));
  CHECK_FALSE(
      plan_check_sample(long_problem(131072), Direction::backward, default_check_budget_flops, 7));
}

TEST_CASE("over the budget, a forward check samples the fraction of rows that fits") {
  const AttentionProblem p = long_problem(1 << 20);  // 2^40 pairs a head: 1.1e15 FLOPs
  const double full = reference_flops(p, Direction::forward);
  const auto sample = plan_check_sample(p, Direction::forward, full / 8, 99);
  REQUIRE(sample);
  CHECK(sample->seed == 99);
  CHECK(sample->query_rows == (1 << 20) / 8);
  CHECK(sample->key_rows == 0);
  CHECK(reference_flops(p, Direction::forward, 1.0 / 8) <= full / 8);
}

TEST_CASE("over the budget, a backward check samples after the row statistics it cannot shrink") {
  const AttentionProblem p = long_problem(1 << 19);
  const double pass = reference_flops(p, Direction::forward) / 2;
  // 2 passes fixed, 7 shrink: a budget of 2 + 3.5 passes leaves half of each.
  const auto half = plan_check_sample(p, Direction::backward, 5.5 * pass, 1);
  REQUIRE(half);
  CHECK(half->query_rows == (1 << 19) / 2);
  CHECK(half->key_rows == (1 << 19) / 2);
  // A budget under the fixed part still compares min_sampled_rows rows: never a skip.
  const auto least = plan_check_sample(p, Direction::backward, pass, 1);
  REQUIRE(least);
  CHECK(least->query_rows == min_sampled_rows);
  CHECK(least->key_rows == min_sampled_rows);
  // Nk != Nq: the key rows are a fraction of the keys.
  AttentionProblem longer_keys = p;
  longer_keys.kv_len = 1 << 20;
  const double longer_pass = reference_flops(longer_keys, Direction::forward) / 2;
  const auto keys = plan_check_sample(longer_keys, Direction::backward, 5.5 * longer_pass, 1);
  REQUIRE(keys);
  CHECK(keys->key_rows == (1 << 20) / 2);
}

TEST_CASE("a problem of fewer rows than the minimum is checked in full, whatever the budget") {
  const AttentionProblem small{1, 4, 200, 64, false, DType::fp16};
  CHECK_FALSE(plan_check_sample(small, Direction::forward, 1.0, 3));
  CHECK_FALSE(plan_check_sample(small, Direction::backward, 1.0, 3));
}

TEST_CASE("sampled rows: distinct, sorted, in range, as many as asked, fixed by the seed") {
  const std::vector<int> rows = sampled_rows(100000, 1000, 42);
  CHECK(rows.size() == 1000);
  CHECK(std::is_sorted(rows.begin(), rows.end()));
  CHECK(std::set<int>(rows.begin(), rows.end()).size() == rows.size());
  CHECK(rows.front() >= 0);
  CHECK(rows.back() < 100000);
  CHECK(sampled_rows(100000, 1000, 42) == rows);
  CHECK(sampled_rows(100000, 1000, 43) != rows);
  // Spread over the range, not bunched at its start: a uniform draw's
  // largest of 1000 rows lies above 99% of the range but for odds of 4e-5.
  CHECK(rows.back() > 99000);
  CHECK(rows.front() < 1000);
  // Asking for every row, or more, gives every row.
  const std::vector<int> all = sampled_rows(10, 12, 1);
  CHECK(all == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(sampled_rows(10, 0, 1).empty());
}

TEST_CASE("a sample's query rows come from its seed, its key rows from seed + 1") {
  AttentionProblem p = long_problem(5000);
  p.kv_len = 9000;
  const CheckSample sample{11, 300, 400};
  CHECK(sampled_query_rows(p, sample) == sampled_rows(5000, 300, 11));
  CHECK(sampled_key_rows(p, sample) == sampled_rows(9000, 400, 12));
}
