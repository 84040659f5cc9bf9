#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include "roofline/model/traffic_model.hpp"
#include "tests/roofline/model/tensor_bytes.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;

TEST_CASE("kv_reload, seed shape, Br = 64, non-causal: ≈ 8.6 GB (§4.1)") {
  const TrafficEstimate t =
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::kv_reload, {64, 64});
  // Q and O: 8 heads · 16384 · 64 · 2 B = 16,777,216 each.
  CHECK(tensor(t, "Q") == 16777216.0);
  CHECK(tensor(t, "O") == 16777216.0);
  // K and V: reloaded once per Q block, ⌈16384/64⌉ = 256 times: 256 · 16,777,216 each.
  CHECK(tensor(t, "K") == 4294967296.0);
  CHECK(tensor(t, "V") == 4294967296.0);
  // LSE: 8 · 16384 fp32.
  CHECK(tensor(t, "LSE") == 524288.0);
  CHECK(t.bytes == 8624013312.0);
  CHECK(t.bytes / 1e9 == Approx(8.6).margin(0.05));
  CHECK(t.compulsory_bytes == 4 * 16777216.0);
}

TEST_CASE("kv_reload causal counts exactly the K/V blocks each Q block needs: ≈ 4.3 GB") {
  const TrafficEstimate t =
      estimate_traffic(seed_shape(true), Direction::forward, TrafficModelKind::kv_reload, {64, 64});
  // Q block i (64 rows) needs K/V blocks 0..i: Σ_{i<256} 64(i+1) = 64 · 256 · 257 / 2
  // = 2,105,344 rows per head; K and V each 8 · 2,105,344 · 64 · 2 B = 2,155,872,256.
  CHECK(kv_rows_loaded_per_head(16384, {64, 64}, true) == 2105344.0);
  CHECK(tensor(t, "K") == 2155872256.0);
  CHECK(tensor(t, "V") == 2155872256.0);
  CHECK(t.bytes == 2155872256.0 * 2 + 16777216.0 * 2 + 524288.0);
  CHECK(t.bytes / 1e9 == Approx(4.3).margin(0.05));
}

TEST_CASE("causal K/V rows with Br != Bc follow the diagonal block by block") {
  // Br = 64, Bc = 32, N = 128: Q block 0 (rows 0..63) needs K/V blocks 0,1 (64 rows);
  // Q block 1 (rows 64..127) needs blocks 0..3 (128 rows).
  CHECK(kv_rows_loaded_per_head(128, {64, 32}, true) == 192.0);
  // Br = 32, Bc = 64, N = 128: Q blocks end at rows 31, 63, 95, 127 -> 64, 64, 128, 128.
  CHECK(kv_rows_loaded_per_head(128, {32, 64}, true) == 384.0);
}

TEST_CASE("ragged N: the last tile loads only rows that exist") {
  // N = 1000, 64x64: 16 Q blocks. Non-causal: 16 · 1000 rows.
  CHECK(kv_rows_loaded_per_head(1000, {64, 64}, false) == 16000.0);
  // Causal: Σ_{i<15} 64(i+1) = 7680, and the last block (rows 960..999) needs all 1000.
  CHECK(kv_rows_loaded_per_head(1000, {64, 64}, true) == 8680.0);
  // N = 1: one Q block reading one K/V row.
  CHECK(kv_rows_loaded_per_head(1, {64, 64}, true) == 1.0);
  CHECK(kv_rows_loaded_per_head(1, {64, 64}, false) == 1.0);
}

TEST_CASE("d = 128 with the 32x32 tile reloads K/V once per 32-row Q block") {
  const AttentionProblem p{1, 8, 4096, 128, false, DType::fp16};
  const TrafficEstimate t =
      estimate_traffic(p, Direction::forward, TrafficModelKind::kv_reload, {32, 32});
  // 4096/32 = 128 loads of 8 · 4096 · 128 · 2 B = 8,388,608 bytes each for K.
  CHECK(tensor(t, "K") == 128 * 8388608.0);
  CHECK(tensor(t, "Q") == 8388608.0);
}

TEST_CASE("materialized, seed shape: S is 4.29 GB and traffic ≈ 17.2 GB (§4.1)") {
  const TrafficEstimate t =
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::materialized, {});
  // S: 8 · 16384² · 2 B = 4,294,967,296, written once and read once.
  CHECK(tensor(t, "S") == 2 * 4294967296.0);
  CHECK(tensor(t, "P") == 2 * 4294967296.0);
  CHECK(tensor(t, "S") / 2 / 1e9 == Approx(4.29).margin(0.005));
  CHECK(t.bytes == 4 * 4294967296.0 + 4 * 16777216.0 + 524288.0);
  CHECK(t.bytes / 1e9 == Approx(17.2).margin(0.05));
}

TEST_CASE("compulsory traffic is Q, K, V, O once in the dtype's element bytes") {
  AttentionProblem p = seed_shape();
  p.dtype = DType::fp32;
  const TrafficEstimate t =
      estimate_traffic(p, Direction::forward, TrafficModelKind::compulsory, {});
  CHECK(t.bytes == 4 * 8 * 16384.0 * 64 * 4);
  CHECK(t.bytes == t.compulsory_bytes);
}

TEST_CASE("fa1_backward bytes follow its three passes (docs/model.md)") {
  // B = H = 1, N = 128, d = 32, fp16, 64x64: one [N, d] tensor is 128 · 32 · 2 = 8192 B.
  const AttentionProblem p{1, 1, 128, 32, false, DType::fp16};
  const TrafficEstimate t =
      estimate_traffic(p, Direction::backward, TrafficModelKind::fa1_backward, {64, 64});
  const double m = 8192;
  // Pass 2 reads Q and dO once per K/V block (2 blocks), pass 3 once: 3 m each.
  CHECK(tensor(t, "Q") == 3 * m);
  CHECK(tensor(t, "dO") == 4 * m);  // plus pass 1
  CHECK(tensor(t, "O") == m);
  // K, V: once in pass 2, once per Q block (2) in pass 3.
  CHECK(tensor(t, "K") == 3 * m);
  CHECK(tensor(t, "V") == 3 * m);
  CHECK(tensor(t, "dQ") == m);
  CHECK(tensor(t, "dK") == m);
  CHECK(tensor(t, "dV") == m);
  // LSE: pass 2 reads 2 · 128 rows, pass 3 128 rows; D: written 128, read 3 · 128.
  CHECK(tensor(t, "LSE") == 3 * 128 * 4.0);
  CHECK(tensor(t, "D") == 4 * 128 * 4.0);
  CHECK(t.compulsory_bytes == 8 * m + 128 * 4.0);
}

TEST_CASE("fa2_backward bytes follow its launches, the dQ atomics included (docs/model.md)") {
  // B = H = 1, N = 256, d = 32, fp16, Br 64 x Bc 128: one [N, d] tensor is
  // 256 · 32 · 2 = 16384 B, its fp32 accumulator 32768 B; 2 K/V blocks each
  // stream all 4 Q blocks: R_q = 512 rows.
  const AttentionProblem p{1, 1, 256, 32, false, DType::fp16};
  const TrafficEstimate t =
      estimate_traffic(p, Direction::backward, TrafficModelKind::fa2_backward, {64, 128});
  const double m = 16384;
  const double accumulator = 32768;
  CHECK(tensor(t, "Q") == 2 * m);   // once per K/V block
  CHECK(tensor(t, "dO") == 3 * m);  // plus the pre-pass
  CHECK(tensor(t, "O") == m);
  CHECK(tensor(t, "K") == m);
  CHECK(tensor(t, "V") == m);
  CHECK(tensor(t, "dQ") == m);
  CHECK(tensor(t, "dK") == m);
  CHECK(tensor(t, "dV") == m);
  CHECK(tensor(t, "LSE") == 512 * 4.0);
  CHECK(tensor(t, "D") == (256 + 512) * 4.0);  // written by the pre-pass, read per K/V block
  // Zeroed, read and written by the atomics once per K/V block (2), read by the convert.
  CHECK(tensor(t, "dQ_accum") == accumulator + 2 * 2 * accumulator + accumulator);
  CHECK(t.compulsory_bytes == 8 * m + 256 * 4.0);

  // Causal: K/V block 1 (keys 128-255) streams only Q blocks 2 and 3.
  AttentionProblem causal = p;
  causal.causal = true;
  const TrafficEstimate c =
      estimate_traffic(causal, Direction::backward, TrafficModelKind::fa2_backward, {64, 128});
  CHECK(tensor(c, "Q") == 1.5 * m);
  CHECK(tensor(c, "dQ_accum") == accumulator + 2 * 1.5 * accumulator + accumulator);
}

TEST_CASE("fa2_backward with GQA: K, V, dK, dV per K/V head, the rest per query head") {
  // B = 1, H = 4 over 2 K/V heads, N = 256, d = 32, fp16, Br 64 x Bc 128: m =
  // 16384 B a head's [N, d], its accumulator 32768 B. A K/V head's 2 CTAs
  // each stream all 4 Q blocks of both query heads of its group: R_q = 512
  // rows a query head, as without GQA.
  AttentionProblem p{1, 4, 256, 32, false, DType::fp16};
  p.kv_heads = 2;
  const TrafficEstimate t =
      estimate_traffic(p, Direction::backward, TrafficModelKind::fa2_backward, {64, 128});
  const double m = 16384;
  const double accumulator = 32768;
  CHECK(tensor(t, "Q") == 4 * 2 * m);
  CHECK(tensor(t, "dO") == 4 * 3 * m);
  CHECK(tensor(t, "O") == 4 * m);
  CHECK(tensor(t, "dQ") == 4 * m);
  CHECK(tensor(t, "K") == 2 * m);  // once per K/V head, not per query head
  CHECK(tensor(t, "V") == 2 * m);
  CHECK(tensor(t, "dK") == 2 * m);  // summed over the group in registers, written once
  CHECK(tensor(t, "dV") == 2 * m);
  CHECK(tensor(t, "LSE") == 4 * 512 * 4.0);
  CHECK(tensor(t, "D") == 4 * (256 + 512) * 4.0);
  CHECK(tensor(t, "dQ_accum") == 4 * (accumulator + 2 * 2 * accumulator + accumulator));
  CHECK(t.bytes ==
        4 * (2 + 3 + 1 + 1) * m + 4 * 2 * m + 4 * (512 + 768) * 4.0 + 4 * 6 * accumulator);
  // Compulsory: Q, O, dO, dQ and LSE of 4 query heads; K, V, dK, dV of 2 K/V heads.
  CHECK(t.compulsory_bytes == 4 * (4 * m + 256 * 4.0) + 2 * 4 * m);
  const TrafficEstimate floor =
      estimate_traffic(p, Direction::backward, TrafficModelKind::compulsory, {});
  CHECK(floor.bytes == t.compulsory_bytes);
  CHECK(tensor(floor, "K") == 2 * m);
  CHECK(tensor(floor, "dQ") == 4 * m);

  // MQA, causal: one K/V head; K/V block 1 streams Q blocks 2 and 3 of each query head.
  p.kv_heads = 1;
  p.causal = true;
  const TrafficEstimate mqa =
      estimate_traffic(p, Direction::backward, TrafficModelKind::fa2_backward, {64, 128});
  CHECK(tensor(mqa, "K") == m);
  CHECK(tensor(mqa, "Q") == 4 * 1.5 * m);
  CHECK(tensor(mqa, "dQ_accum") == 4 * (accumulator + 2 * 1.5 * accumulator + accumulator));
}

TEST_CASE("the backward models at one K/V head per query head are the square ones, exactly") {
  // kv_heads spelled as heads is square self-attention: the same bytes, tensor
  // for tensor (the square figures themselves are pinned above), at a shape
  // whose bytes are far past 2^53 too.
  for (const TrafficModelKind model : {TrafficModelKind::compulsory, TrafficModelKind::fa1_backward,
                                       TrafficModelKind::fa2_backward}) {
    for (AttentionProblem p : {AttentionProblem{1, 1, 128, 32, false, DType::fp16},
                               AttentionProblem{64, 64, 1 << 30, 128, true, DType::fp32}}) {
      const TrafficEstimate square = estimate_traffic(p, Direction::backward, model, {64, 128});
      p.kv_heads = p.heads;
      const TrafficEstimate spelled = estimate_traffic(p, Direction::backward, model, {64, 128});
      CHECK(spelled.bytes == square.bytes);
      CHECK(spelled.compulsory_bytes == square.compulsory_bytes);
      REQUIRE(spelled.breakdown.size() == square.breakdown.size());
      for (std::size_t i = 0; i < square.breakdown.size(); ++i) {
        CHECK(spelled.breakdown[i].tensor == square.breakdown[i].tensor);
        CHECK(spelled.breakdown[i].bytes == square.breakdown[i].bytes);
      }
    }
  }
}

TEST_CASE("the backward models refuse what their kernels' launches do not take") {
  AttentionProblem gqa{1, 4, 256, 32, false, DType::fp16};
  gqa.kv_heads = 2;
  // fa1_bwd has no GQA: its model stays square.
  CHECK_THROWS_WITH(
      estimate_traffic(gqa, Direction::backward, TrafficModelKind::fa1_backward, {64, 64}),
      Catch::Contains("as many K/V heads as query heads"));
  // Nq != Nk, and a paged cache: no backward model.
  AttentionProblem longer = gqa;
  longer.kv_len = 512;
  AttentionProblem paged = gqa;
  paged.page_size = 16;
  for (const AttentionProblem& p : {longer, paged}) {
    for (const TrafficModelKind model :
         {TrafficModelKind::compulsory, TrafficModelKind::fa2_backward}) {
      CHECK_THROWS_WITH(estimate_traffic(p, Direction::backward, model, {64, 128}),
                        Catch::Contains("as many keys as queries"));
    }
  }
}

TEST_CASE("causal backward: a K/V block reads only the Q blocks at or below the diagonal") {
  // N = 128, 64x64: K/V block 0 needs Q blocks 0, 1 (128 rows); block 1 needs Q block 1 (64).
  CHECK(q_rows_loaded_per_head(128, {64, 64}, true) == 192.0);
  CHECK(q_rows_loaded_per_head(128, {64, 64}, false) == 256.0);
}

TEST_CASE("tiled models refuse an untiled kernel and direction mismatches") {
  CHECK_THROWS_AS(
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::kv_reload, {}),
      std::invalid_argument);
  CHECK_THROWS_AS(
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::fa1_backward, {64, 64}),
      std::invalid_argument);
  CHECK_THROWS_AS(
      estimate_traffic(seed_shape(), Direction::forward, TrafficModelKind::fa2_backward, {64, 128}),
      std::invalid_argument);
  CHECK_THROWS_AS(
      estimate_traffic(seed_shape(), Direction::backward, TrafficModelKind::fa2_backward, {}),
      std::invalid_argument);
  AttentionProblem bad = seed_shape();
  bad.seq_len = 0;
  CHECK_THROWS_AS(estimate_traffic(bad, Direction::forward, TrafficModelKind::compulsory, {}),
                  std::invalid_argument);
}

namespace {

// The block-by-block loops the closed forms replaced (docs/model.md §2.3): the
// oracle for any N and tile.
double kv_rows_by_loop(std::int64_t n, TileShape tile) {
  double rows = 0;
  for (std::int64_t i = 0; i < (n + tile.br - 1) / tile.br; ++i) {
    const std::int64_t last_row = std::min(n, (i + 1) * tile.br) - 1;
    rows += static_cast<double>(std::min(n, (last_row / tile.bc + 1) * tile.bc));
  }
  return rows;
}

double q_rows_by_loop(std::int64_t n, TileShape tile) {
  double rows = 0;
  for (std::int64_t j = 0; j < (n + tile.bc - 1) / tile.bc; ++j) {
    rows += static_cast<double>(n - (j * tile.bc) / tile.br * tile.br);
  }
  return rows;
}

}  // namespace

TEST_CASE("causal block counts in closed form equal the block-by-block loops") {
  for (const TileShape tile :
       {TileShape{64, 64}, TileShape{64, 32}, TileShape{32, 64}, TileShape{32, 32},
        TileShape{128, 48}, TileShape{1, 7}, TileShape{48, 1}}) {
    for (std::int64_t n :
         {1, 2, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4097, 16384, 100003}) {
      INFO("N = " << n << ", tile " << tile.br << "x" << tile.bc);
      CHECK(kv_rows_loaded_per_head(n, tile, true) == kv_rows_by_loop(n, tile));
      CHECK(q_rows_loaded_per_head(n, tile, true) == q_rows_by_loop(n, tile));
    }
  }
}

TEST_CASE("causal block counts at N = 2^31 - 1 take no time and stay exact") {
  // Issue 12: the loops took minutes on a historical row with a huge N. With
  // Br = Bc = 64 and N = 64·q + r: Σ_{i<q} 64(i+1) + N = 32·q(q+1) + N.
  const std::int64_t n = 2147483647;
  const std::int64_t q = n / 64;  // full Q blocks before the ragged last one
  // About 3.6e16: beyond 2^53, so equal to a double's precision.
  CHECK(kv_rows_loaded_per_head(n, {64, 64}, true) ==
        Approx(static_cast<double>(32 * q * (q + 1) + n)).epsilon(1e-15));
}
