#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "roofline/core/problem_limits.hpp"
#include "roofline/model/flop_model.hpp"
#include "roofline/model/kv_splits.hpp"
#include "roofline/model/traffic_model.hpp"
#include "tests/roofline/model/tensor_bytes.hpp"

// The shapes attention is served in (issue 25): decode, GQA, a KV cache,
// paged KV. Every expected value is derived by hand in its comment from
// docs/model.md's formulas.

using namespace cfr;

namespace {

// Llama-3-8B's attention at decode: 32 query heads, 8 K/V heads, d 128.
AttentionProblem decode(std::int64_t batch, std::int64_t kv_len, std::int64_t q_len = 1) {
  AttentionProblem p{batch, 32, q_len, 128, q_len > 1, DType::fp16};
  p.kv_len = kv_len;
  p.kv_heads = 8;
  return p;
}

// Unmasked pairs by brute force: query i sees keys j <= i + Nk - Nq.
double pairs_by_loop(std::int64_t q_len, std::int64_t kv_len, bool causal) {
  double pairs = 0;
  for (std::int64_t i = 0; i < q_len; ++i) {
    for (std::int64_t j = 0; j < kv_len; ++j) pairs += !causal || j <= i + kv_len - q_len;
  }
  return pairs;
}

// K/V rows one query head loads, Q block by Q block (fa2_mma's loop).
double kv_rows_by_loop(std::int64_t q_len, std::int64_t kv_len, TileShape tile) {
  double rows = 0;
  for (std::int64_t q0 = 0; q0 < q_len; q0 += tile.br) {
    const std::int64_t last = std::min(q_len, q0 + tile.br) - 1 + kv_len - q_len;
    const std::int64_t kv_blocks = std::min((kv_len + tile.bc - 1) / tile.bc, last / tile.bc + 1);
    rows += static_cast<double>(std::min(kv_len, kv_blocks * tile.bc));
  }
  return rows;
}

}  // namespace

TEST_CASE("square problems keep their meaning: kv_len 0 is seq_len, kv_heads 0 is heads") {
  AttentionProblem implicit{2, 8, 1000, 64, true, DType::bf16};
  AttentionProblem spelled = implicit;
  spelled.kv_len = 1000;
  spelled.kv_heads = 8;
  CHECK(implicit == spelled);
  CHECK(implicit.square());
  CHECK(spelled.square());
  spelled.page_size = 16;
  CHECK_FALSE(spelled.square());
  CHECK(implicit != spelled);
}

TEST_CASE("unmasked pairs: Nq·Nk, and bottom-right causal Nq(Nk-Nq) + Nq(Nq+1)/2") {
  for (auto [q, k] : {std::pair{1, 1}, {1, 4096}, {4, 100}, {16, 17}, {100, 100}, {7, 3}}) {
    for (bool causal : {false, true}) {
      if (causal && q > k) continue;
      AttentionProblem p{1, 1, q, 64, causal, DType::fp16};
      p.kv_len = k;
      INFO("Nq " << q << " Nk " << k << " causal " << causal);
      CHECK(unmasked_pairs(p) == pairs_by_loop(q, k, causal));
    }
  }
  // Decode: one query sees every key, causal or not.
  AttentionProblem one = decode(1, 4096);
  one.causal = true;
  CHECK(unmasked_pairs(one) == 4096.0);
}

TEST_CASE("decode FLOPs are 4·B·H·Nq·Nk·d over the query heads") {
  // B 8, 32 heads, 1 query, 32768 keys, d 128: 4 · 8 · 32 · 32768 · 128 = 4,294,967,296.
  const FlopCounts f = attention_flops(decode(8, 32768), Direction::forward, FlopConvention::exact);
  CHECK(f.dense == 4294967296.0);
  CHECK(f.exact == f.dense);
  // Four causal query tokens: 4 · (32768 - 4) + 4 · 5 / 2 = 131,066 pairs per head;
  // 8 · 32 · 131066 · 4 · 128 = 17,179,082,752.
  const FlopCounts spec =
      attention_flops(decode(8, 32768, 4), Direction::forward, FlopConvention::exact);
  CHECK(spec.exact == 17179082752.0);
}

TEST_CASE("compulsory bytes count K and V per K/V head and the page table once") {
  // B 1, Nk 131072, d 128, fp16: K = 8 heads · 131072 · 256 B = 268,435,456; Q = O =
  // 32 · 1 · 256 = 8192.
  const TrafficEstimate t =
      estimate_traffic(decode(1, 131072), Direction::forward, TrafficModelKind::compulsory, {});
  CHECK(tensor(t, "K") == 268435456.0);
  CHECK(tensor(t, "V") == 268435456.0);
  CHECK(tensor(t, "Q") == 8192.0);
  CHECK(tensor(t, "O") == 8192.0);
  CHECK(tensor(t, "page_table") == -1);
  CHECK(t.bytes == 2 * 268435456.0 + 2 * 8192.0);
  AttentionProblem paged = decode(2, 1000);
  paged.page_size = 16;
  // ⌈1000 / 16⌉ = 63 pages a sequence, 2 sequences, 4 B each = 504.
  CHECK(tensor(estimate_traffic(paged, Direction::forward, TrafficModelKind::compulsory, {}),
               "page_table") == 504.0);
}

TEST_CASE("kv_reload with GQA reads K/V once per query head, bottom-right causal") {
  // fa2_mma: every query head's Q blocks stream their K/V rows.
  for (auto [q, k] : {std::pair{100, 100}, {17, 300}, {64, 64}, {257, 1000}, {1, 4097}}) {
    for (TileShape tile : {TileShape{128, 64}, TileShape{64, 32}, TileShape{256, 64}}) {
      INFO("Nq " << q << " Nk " << k << " tile " << tile.br << "x" << tile.bc);
      CHECK(kv_rows_loaded_per_head(q, k, tile, true) == kv_rows_by_loop(q, k, tile));
      CHECK(kv_rows_loaded_per_head(q, k, tile, false) ==
            static_cast<double>((q + tile.br - 1) / tile.br * k));
    }
  }
  AttentionProblem gqa{1, 32, 4096, 128, false, DType::fp16};
  gqa.kv_heads = 8;
  const TrafficEstimate t =
      estimate_traffic(gqa, Direction::forward, TrafficModelKind::kv_reload, {256, 64});
  // 32 query heads · ⌈4096/256⌉ = 16 blocks · 4096 rows · 256 B = 536,870,912 for K.
  CHECK(tensor(t, "K") == 536870912.0);
  // The floor counts K once per K/V head: 8 · 4096 · 256 = 8,388,608.
  CHECK(t.compulsory_bytes == 2 * 32 * 4096 * 256.0 + 2 * 8388608.0);
}

TEST_CASE("split_kv: K/V once per row block, Q per split, the splits' partials twice") {
  // 32 query heads over 8 K/V heads, one token: 4 group rows in one 16-row block.
  const AttentionProblem p = decode(1, 131072);
  const TrafficEstimate one =
      estimate_traffic(p, Direction::forward, TrafficModelKind::split_kv, {16, 64}, 1);
  CHECK(tensor(one, "K") == 268435456.0);
  CHECK(tensor(one, "O_partial") == -1);
  const TrafficEstimate split =
      estimate_traffic(p, Direction::forward, TrafficModelKind::split_kv, {16, 64}, 16);
  CHECK(split.kv_splits == 16);
  CHECK(tensor(split, "K") == 268435456.0);
  CHECK(tensor(split, "Q") == 16 * 8192.0);
  // 16 splits · 32 rows · (128 + 1) floats · 4 B = 264,192, written and read.
  CHECK(tensor(split, "O_partial") == 2 * 264192.0);
  // 16 query tokens of 4 heads: 64 group rows in 4 blocks of 16, K read 4 times.
  const TrafficEstimate blocks = estimate_traffic(decode(1, 4096, 16), Direction::forward,
                                                  TrafficModelKind::split_kv, {16, 64}, 1);
  CHECK(tensor(blocks, "K") == 4 * 8 * 4096 * 256.0);
}

TEST_CASE("the byte models refuse what they cannot describe") {
  AttentionProblem causal_more_queries = decode(1, 8, 16);
  CHECK_THROWS_AS(
      estimate_traffic(causal_more_queries, Direction::forward, TrafficModelKind::compulsory, {}),
      std::invalid_argument);
  AttentionProblem paged = decode(1, 4096);
  paged.page_size = 16;
  CHECK_THROWS_AS(
      estimate_traffic(paged, Direction::forward, TrafficModelKind::kv_reload, {128, 64}),
      std::invalid_argument);
  CHECK_THROWS_AS(
      estimate_traffic(decode(1, 4096), Direction::backward, TrafficModelKind::compulsory, {}),
      std::invalid_argument);
  AttentionProblem odd = decode(1, 4096);
  odd.kv_heads = 5;  // 32 is no multiple of 5
  CHECK_THROWS_AS(estimate_traffic(odd, Direction::forward, TrafficModelKind::compulsory, {}),
                  std::invalid_argument);
}

TEST_CASE("problem limits name what a served shape gets wrong") {
  AttentionProblem odd = decode(1, 4096);
  odd.kv_heads = 5;
  CHECK(problem_out_of_range(odd).value_or("").find("not a multiple of kv_heads") !=
        std::string::npos);
  CHECK(problem_out_of_range(decode(1, 8, 16)).value_or("").find("bottom-right") !=
        std::string::npos);
  AttentionProblem negative = decode(1, 4096);
  negative.kv_len = -1;
  CHECK(problem_out_of_range(negative).has_value());
  CHECK_FALSE(problem_out_of_range(decode(128, 131072)).has_value());
}

TEST_CASE("kv splits: a power of two filling the SMs once, at least 4 tiles a split") {
  // 132 SMs. B 1, 8 K/V heads: 8 groups; up to 16 splits (128 CTAs), but 2048 keys are
  // 32 tiles of 64: 8 splits of 4 tiles.
  CHECK(plan_kv_splits(decode(1, 131072), {16, 64}, 132, 0).splits == 16);
  CHECK(plan_kv_splits(decode(1, 2048), {16, 64}, 132, 0).splits == 8);
  CHECK(plan_kv_splits(decode(1, 2048), {16, 64}, 132, 0).key_tiles == 32);
  // B 8: 64 groups, 2 splits; B 32: 256 groups fill the SMs alone.
  CHECK(plan_kv_splits(decode(8, 32768), {16, 64}, 132, 0).splits == 2);
  CHECK(plan_kv_splits(decode(32, 32768), {16, 64}, 132, 0).splits == 1);
  CHECK(plan_kv_splits(decode(32, 32768), {16, 64}, 132, 0).groups == 256);
  // A paged cache whose page indices stay in global memory aims at two CTAs per SM.
  AttentionProblem paged = decode(8, 32768);
  paged.page_size = 16;
  CHECK(plan_kv_splits(paged, {16, 64}, 132, 0).splits == 4);
  // 64 group rows (16 tokens of 4 heads) in blocks of 16: 4 row blocks per K/V head.
  CHECK(plan_kv_splits(decode(8, 32768, 16), {16, 64}, 132, 0).groups == 8 * 8 * 4);
  // One key: one tile, never split.
  CHECK(plan_kv_splits(decode(1, 1), {16, 64}, 132, 0).splits == 1);
}

TEST_CASE(
    "kv splits: a paged cache takes the contiguous plan where a split's pages fit its table") {
  const auto paged = [](std::int64_t batch, std::int64_t kv_len, std::int64_t page_size) {
    AttentionProblem problem = decode(batch, kv_len);
    problem.page_size = page_size;
    return problem;
  };
  // B 1, Nk 32K: 16 splits of 2048 keys, 128 pages of 16; B 8, Nk 32K: 2 splits of 1024 pages.
  CHECK(plan_kv_splits(paged(1, 32768, 16), {16, 64}, 132, 2048).splits == 16);
  CHECK(plan_kv_splits(paged(8, 32768, 16), {16, 64}, 132, 2048).splits == 2);
  CHECK(plan_kv_splits(paged(8, 32768, 256), {16, 64}, 132, 2048).splits == 2);
  // B 8, Nk 128K: 2 splits of 4096 pages of 16 overflow 2048 entries, so two CTAs per SM
  // (4 splits of 2048 pages); 256-token pages fit (256 a split).
  CHECK(plan_kv_splits(paged(8, 131072, 16), {16, 64}, 132, 2048).splits == 4);
  CHECK(plan_kv_splits(paged(8, 131072, 256), {16, 64}, 132, 2048).splits == 2);
  // A split counts the pages it touches as the kernel stages them: 16 splits of 9 tiles of 64
  // keys (576) start 0, 64, 128 or 192 keys into a 256-token page and touch 3 pages each, so a
  // table of 3 takes the contiguous plan and one of 2 the doubled plan.
  CHECK(plan_kv_splits(paged(1, 144 * 64, 256), {16, 64}, 132, 3).splits == 16);
  CHECK(plan_kv_splits(paged(1, 144 * 64, 256), {16, 64}, 132, 2).splits == 32);
  // Splits of 11 tiles (704 keys): the one starting 192 keys into a page touches 4.
  CHECK(plan_kv_splits(paged(1, 176 * 64, 256), {16, 64}, 132, 4).splits == 16);
  CHECK(plan_kv_splits(paged(1, 176 * 64, 256), {16, 64}, 132, 3).splits == 32);
  // The table's size is the only change: the contiguous plan is the same with or without it.
  CHECK(plan_kv_splits(decode(8, 131072), {16, 64}, 132, 2048).splits ==
        plan_kv_splits(decode(8, 131072), {16, 64}, 132, 0).splits);
}
