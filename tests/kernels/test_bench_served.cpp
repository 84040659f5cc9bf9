// The served shapes (issue 25) measured the way `sweep` measures them
// (bench::DeviceSession), on a GPU: decode and speculative rows of fa2_decode
// on a contiguous and a paged cache (pages shuffled), and fa2_mma's GQA rows
// with Nq != Nk and the bottom-right mask, each checked against the fp32
// reference over its own Q-sized O and timed. A row whose K/V were allocated
// or paged wrong reads the wrong keys and fails its check.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "bench_rows.hpp"
#include "kernels/bench/attention_bench.hpp"
#include "kernels/kernel_registry.hpp"

namespace cfr::kernels {
namespace {

using testing::kernel;
using testing::quick;

AttentionProblem served(std::int64_t batch, std::int64_t heads, std::int64_t kv_heads,
                        std::int64_t q_len, std::int64_t kv_len, bool causal, DType dtype,
                        std::int64_t page_size) {
  AttentionProblem p{batch, heads, q_len, 128, causal, dtype};
  p.kv_heads = kv_heads;
  p.kv_len = kv_len;
  p.page_size = page_size;
  return p;
}

void expect_ok(bench::DeviceSession& session, std::string_view name, const AttentionProblem& p) {
  INFO(name << " B" << p.batch << " H" << p.heads << "/" << p.key_heads() << " Nq" << p.seq_len
            << " Nk" << p.keys() << (p.causal ? " causal" : "") << " page " << p.page_size);
  const bench::BenchResult result = session.run(kernel(name), p, quick());
  INFO(result.reason);
  CHECK(result.status == RowStatus::ok);
  REQUIRE(result.correctness.has_value());
  CHECK(result.correctness->passed);
  CHECK(result.timing.has_value());
}

}  // namespace

TEST_CASE("fa2_decode rows on contiguous and shuffled paged caches pass the check and are timed",
          "[bench][served]") {
  bench::DeviceSession session(0);
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (std::int64_t page : {0, 16, 256}) {
      // Odd key counts: a last page part full, a single key.
      for (std::int64_t kv_len : {1, 1000, 4097}) {
        expect_ok(session, "fa2_decode", served(3, 32, 8, 1, kv_len, false, dtype, page));
      }
      // Speculative: 4 query tokens, causal, bottom-right.
      expect_ok(session, "fa2_decode", served(2, 32, 8, 4, 2000, true, dtype, page));
    }
    expect_ok(session, "fa2_decode", served(4, 32, 32, 1, 3000, false, dtype, 0));  // MHA
  }
}

TEST_CASE("fa2_mma GQA rows with Nq != Nk and the bottom-right mask pass the check and are timed",
          "[bench][served]") {
  bench::DeviceSession session(0);
  expect_ok(session, "fa2_mma", served(1, 32, 8, 300, 1000, true, DType::fp16, 0));
  expect_ok(session, "fa2_mma", served(2, 16, 4, 1000, 1000, false, DType::bf16, 0));
}

}  // namespace cfr::kernels
