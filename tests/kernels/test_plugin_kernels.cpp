// Plugin kernels measured the way `sweep` measures them (bench::DeviceSession
// over the process's registry), on a GPU: the example plugin's kernel passes
// the reference check and is timed; the same kernel with half the softmax
// scale fails the check; a launch that returns an error fails its row with the
// plugin's message, and the session measures the next row as usual.
#include <unistd.h>

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "bench_rows.hpp"
#include "kernels/bench/attention_bench.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/plugin/plugin_loader.hpp"

namespace cfr::kernels {
namespace {

using testing::kernel;
using testing::quick;

// The build folder, from this binary's place in it (build/tests/kernels/),
// so the tests find the plugins wherever the build was copied to.
std::string build_dir() {
  std::string exe(4096, '\0');
  const ssize_t length = ::readlink("/proc/self/exe", exe.data(), exe.size());
  REQUIRE(length > 0);
  exe.resize(static_cast<std::size_t>(length));
  return exe.substr(0, exe.rfind('/')) + "/../..";
}

// Loaded once into the process's registry, which the bench reads.
void load_test_plugins() {
  static const bool loaded = [] {
    const std::string build = build_dir();
    load_plugin(build + "/kernels/plugin/example/libcfr_example_plugin.so", registry());
    load_plugin(build + "/tests/kernels/plugins/libcfr_wrong_scale_plugin.so", registry());
    load_plugin(build + "/tests/kernels/plugins/libcfr_test_plugin_tiny.so", registry());
    load_plugin(build + "/tests/kernels/plugins/libcfr_test_plugin_bytes.so", registry());
    return true;
  }();
  (void)loaded;
}

}  // namespace

TEST_CASE("the example plugin's kernel passes the reference check and is timed", "[plugin]") {
  load_test_plugins();
  bench::DeviceSession session(0);
  // Ragged N (1000 is no multiple of Br 64 or Bc 32), both masks, every dtype and head dim.
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp32}) {
    for (std::int64_t head_dim : {64, 128}) {
      for (bool causal : {false, true}) {
        const AttentionProblem problem{2, 3, 1000, head_dim, causal, dtype};
        INFO(to_string(dtype) << " d=" << head_dim << " causal=" << causal);
        const bench::BenchResult result = session.run(kernel("example_simt"), problem, quick());
        CHECK(result.reason == "");
        CHECK(result.status == RowStatus::ok);
        REQUIRE(result.correctness);
        CHECK(result.correctness->passed);
        REQUIRE(result.timing);
        CHECK(result.timing->samples_ms.size() >= 3);
      }
    }
  }
}

// ABI version 3: the example takes K/V lengths and GQA. A decode, a prefill
// that continues a cache (bottom-right causal mask) and GQA groups of 4, each
// against the reference.
TEST_CASE("the example plugin's kernel passes the reference check on served shapes", "[plugin]") {
  load_test_plugins();
  bench::DeviceSession session(0);
  for (std::int64_t kv_heads : {2, 8}) {
    for (const auto& [q_len, kv_len] :
         {std::pair<std::int64_t, std::int64_t>{1, 1000}, {100, 1000}, {300, 300}}) {
      for (bool causal : {false, true}) {
        AttentionProblem problem{2, 8, q_len, 64, causal, DType::fp16};
        problem.kv_len = kv_len;
        problem.kv_heads = kv_heads;
        INFO("Hkv=" << kv_heads << " N=" << q_len << " Nk=" << kv_len << " causal=" << causal);
        const bench::BenchResult result = session.run(kernel("example_simt"), problem, quick());
        CHECK(result.reason == "");
        CHECK(result.status == RowStatus::ok);
        REQUIRE(result.correctness);
        CHECK(result.correctness->passed);
      }
    }
  }
}

// bytes_plugin.c's tiny_bytes (CFR_SHAPE_PAGED) launches nothing and says
// what cache it was handed: the bench's shuffled page table, 1000 keys in
// pages of 16 tokens = 63 pages a sequence.
TEST_CASE("a plugin kernel of a paged row is handed the bench's page table", "[plugin]") {
  load_test_plugins();
  bench::DeviceSession session(0);
  AttentionProblem problem{2, 8, 1, 64, false, DType::fp16};
  problem.kv_heads = 2;
  problem.kv_len = 1000;
  problem.page_size = 16;
  const bench::BenchResult paged = session.run(kernel("tiny_bytes"), problem, quick());
  CHECK(paged.status == RowStatus::failed);
  CHECK(paged.reason ==
        "tiny_bytes launch failed: tiny_bytes launches nothing (page_size 16, page_table given, "
        "63 pages)");
  problem.page_size = 0;
  const bench::BenchResult contiguous = session.run(kernel("tiny_bytes"), problem, quick());
  CHECK(contiguous.reason ==
        "tiny_bytes launch failed: tiny_bytes launches nothing (page_size 0, page_table null, 0 "
        "pages)");
}

TEST_CASE("a plugin kernel with a wrong softmax scale fails the correctness check", "[plugin]") {
  load_test_plugins();
  bench::DeviceSession session(0);
  const AttentionProblem problem{1, 4, 512, 64, false, DType::fp16};
  const bench::BenchResult result = session.run(kernel("example_wrong_scale"), problem, quick());
  CHECK(result.status == RowStatus::failed);
  CHECK(result.reason.rfind("correctness: ", 0) == 0);
  REQUIRE(result.correctness);
  CHECK_FALSE(result.correctness->passed);
  CHECK_FALSE(result.timing);  // a kernel that fails the check is not timed
}

TEST_CASE("a plugin launch error fails its row with the plugin's message; the next row runs",
          "[plugin]") {
  load_test_plugins();
  bench::DeviceSession session(0);
  const AttentionProblem problem{1, 2, 300, 64, true, DType::fp16};
  const bench::BenchResult refused = session.run(kernel("tiny_fwd"), problem, quick());
  CHECK(refused.status == RowStatus::failed);
  CHECK(refused.reason ==
        "tiny_fwd launch failed: tiny_fwd launches nothing (asked for N=300; kv_len 300, "
        "kv_heads 2, page_size 0, page_table null, pages_per_sequence 0)");
  CHECK_FALSE(refused.device_lost);
  const bench::BenchResult next = session.run(kernel("example_simt"), problem, quick());
  CHECK(next.status == RowStatus::ok);
}

}  // namespace cfr::kernels
