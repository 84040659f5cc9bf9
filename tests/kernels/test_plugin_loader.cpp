// The plugin loader without a GPU: a valid plugin in plain C
// (tests/kernels/plugins/test_plugin.c) joins the registry with what it
// declares; each defect variant of it is refused with one line and leaves the
// registry as it was.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "kernels/kernel_registry.hpp"
#include "kernels/plugin/plugin_loader.hpp"
#include "roofline/core/sha256.hpp"
#include "roofline/model/own_byte_count.hpp"

using namespace cfr;
using namespace cfr::kernels;

namespace {

std::string test_plugin(const std::string& name) {
  return std::string(CFR_TEST_PLUGIN_DIR) + "/libcfr_test_plugin_" + name + ".so";
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The loader's message for a plugin it refuses; "loaded" when it takes it.
std::string refusal(const std::string& path, KernelRegistry& registry) {
  try {
    load_plugin(path, registry);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "loaded";
}

}  // namespace

TEST_CASE("a valid plugin's kernels join the registry as declared", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  const std::size_t built_in = registry.entries().size();
  const std::string path = test_plugin("tiny");
  const LoadedPlugin loaded = load_plugin(path, registry);

  REQUIRE(registry.entries().size() == built_in + 2);
  CHECK(loaded.sha256 == sha256_hex(file_bytes(path)));
  REQUIRE(loaded.kernels.size() == 2);
  CHECK(loaded.kernels[0] == PluginKernelRecord{"tiny_fwd", "0.1-test", path, loaded.sha256});
  CHECK(loaded.kernels[1] == PluginKernelRecord{"tiny_bwd", "0.2-test", path, loaded.sha256});

  // test_plugin.c: fp16 and fp32, d 64 (tile 64x64) and 128 (64x32), SIMT, kv_reload, 8.0.
  const KernelEntry* forward = registry.find("tiny_fwd");
  REQUIRE(forward != nullptr);
  CHECK(forward->origin == "plugin " + path);
  const KernelDescription& d = forward->description;
  CHECK(d.direction == Direction::forward);
  CHECK((d.dtypes.fp16 && !d.dtypes.bf16 && d.dtypes.fp32));
  CHECK(std::vector<int>(d.head_dims.begin(), d.head_dims.end()) == std::vector<int>{64, 128});
  CHECK(d.tile_for(64, {9, 0}) == TileShape{64, 64});
  CHECK(d.tile_for(128, {9, 0}) == TileShape{64, 32});
  CHECK(d.compute_unit_for(DType::fp16) == ComputeUnit::fp32_simt);
  CHECK(d.traffic == TrafficModelKind::kv_reload);
  CHECK(d.min_compute_capability == ComputeCapability{8, 0});
  CHECK(forward->cannot_run_on({7, 5}).has_value());
  CHECK_FALSE(forward->cannot_run_on({9, 0}).has_value());

  const KernelEntry* backward = registry.find("tiny_bwd");
  REQUIRE(backward != nullptr);
  CHECK(registry.forward_partner(*backward) == forward);
  CHECK(backward->description.compute_unit_for(DType::fp16) == ComputeUnit::fp16_tensor);
  CHECK(backward->description.traffic == TrafficModelKind::fa1_backward);
}

// The launch functions of test_plugin.c touch no device, so their errors and
// messages reach the caller here as they would in a sweep.
TEST_CASE("a plugin launch's error and message reach the caller", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  load_plugin(test_plugin("tiny"), registry);
  AttentionShape shape;
  shape.seq_len = 1000;
  std::string message;
  LaunchContext context;
  context.failure_message = &message;

  const ForwardKernel* forward = registry.find("tiny_fwd")->forward();
  REQUIRE(forward != nullptr);
  CHECK(forward->workspace_bytes(shape) == 4000);  // test_plugin.c: 4 bytes per query row
  CHECK(forward->launch(shape, {}, context) != cudaSuccess);
  // A square shape has its K/V fields resolved, never 0 (cuflash_roofline_plugin.h).
  CHECK(message ==
        "tiny_fwd launches nothing (asked for N=1000; kv_len 1000, kv_heads 1, page_size 0, "
        "page_table null, pages_per_sequence 0)");
  // A paged decode shape: the K/V fields and the page table reach the plugin
  // (test_plugin.c only prints whether the table is there: no device memory here).
  shape.seq_len = 4;
  shape.heads = 32;
  shape.kv_heads = 8;
  shape.kv_len = 1000;
  shape.page_size = 16;
  const int table[1] = {};
  ForwardBuffers paged;
  paged.page_table = table;
  paged.pages_per_sequence = 63;
  CHECK(forward->launch(shape, paged, context) != cudaSuccess);
  CHECK(message ==
        "tiny_fwd launches nothing (asked for N=4; kv_len 1000, kv_heads 8, page_size 16, "
        "page_table given, pages_per_sequence 63)");

  const BackwardKernel* backward = registry.find("tiny_bwd")->backward();
  REQUIRE(backward != nullptr);
  CHECK(backward->workspace_bytes(shape) == 0);  // no workspace callback: none
  CHECK(backward->launch(shape, {}, context) != cudaSuccess);
  CHECK(message == "the plugin's launch returned an error and no message");
}

TEST_CASE("a plugin that breaks a rule is refused with one line and registers nothing",
          "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  const std::size_t built_in = registry.entries().size();
  // Each defect of test_plugin.c (tests/kernels/plugins/meson.build) and the
  // words its refusal must hold.
  const std::pair<const char*, const char*> defects[] = {
      {"no_entry_point", "has no cfr_plugin_kernels() entry point"},
      {"abi_0", "built for plugin ABI version 0, this tool reads versions 1 to 3"},
      {"abi_next", "built for plugin ABI version 4, this tool reads versions 1 to 3"},
      {"abi_100", "built for plugin ABI version 100, this tool reads versions 1 to 3"},
      {"null_name", "kernel #0 (of kernel_count 2): has a null or empty name"},
      {"empty_name", "kernel #0 (of kernel_count 2): has a null or empty name"},
      {"builtin_name", "kernel 'fa2_mma': the name is taken (built in)"},
      {"unknown_dtype", "kernel 'tiny_fwd': unknown dtype bits 0x8"},
      {"unknown_model", "kernel 'tiny_fwd': unknown traffic model 'l2_magic'"},
      {"bad_head_dim", "kernel 'tiny_fwd': head dim 64 cannot be"},
      {"bad_tile", "kernel 'tiny_fwd': tile 64x0 at head dim 64 cannot be"},
      // Issue 21: pointers are checked before they are read.
      {"wild_name",
       "kernel #0 (of kernel_count 2): its name points outside the process's readable memory"},
      {"tile_count",
       "kernel 'tiny_fwd': its 100000000 tiles run past the process's readable memory"},
      // Version 3's served shapes.
      {"unknown_shapes",
       "kernel 'tiny_fwd': unknown shape bits 0x8 (CFR_SHAPE_KV_LEN, _GQA, _PAGED)"},
      {"bad_max_q_len", "kernel 'tiny_fwd': max_q_len -1 cannot be (0: any query length)"},
      {"backward_shapes",
       "kernel 'tiny_bwd': shapes 0x2, but a backward kernel takes square shapes only"},
      // bytes_plugin.c's defects: the hbm_bytes callback and the model that reads it.
      {"bytes_no_callback",
       "kernel 'tiny_bytes': traffic model 'plugin' needs an hbm_bytes "
       "callback"},
      {"bytes_callback_other_model",
       "kernel 'tiny_bytes': has an hbm_bytes callback, which only traffic model 'plugin' reads "
       "(it declares 'kv_reload')"},
  };
  for (const auto& [defect, words] : defects) {
    INFO(defect);
    const std::string path = test_plugin(defect);
    const std::string message = refusal(path, registry);
    CHECK(message.find("plugin " + path + ": ") == 0);
    CHECK(message.find(words) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(registry.entries().size() == built_in);
  }
}

TEST_CASE("a plugin whose names another plugin has taken is refused", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  const std::string path = test_plugin("tiny");
  load_plugin(path, registry);
  const std::size_t loaded = registry.entries().size();
  CHECK(refusal(path, registry) ==
        fmt::format("plugin {}: kernel 'tiny_fwd': the name is taken (plugin {})", path, path));
  CHECK(registry.entries().size() == loaded);
}

TEST_CASE("a file that is not a shared library, or no file, is refused", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  const std::string text = "/tmp/cfr-plugin-test-not-a-library.so";
  std::ofstream(text) << "not a shared library\n";
  const std::string message = refusal(text, registry);
  CHECK(message.find("plugin " + text + ": not a shared library this tool can load (") == 0);
  std::remove(text.c_str());
  CHECK(refusal("/tmp/cfr-plugin-test-nothing-here.so", registry) ==
        fmt::format("plugin /tmp/cfr-plugin-test-nothing-here.so: cannot be read ({})",
                    std::strerror(ENOENT)));
}

TEST_CASE("a plugin path that is a symbolic-link loop is refused in the system's words",
          "[plugin]") {
  // Issue 21: a loop was reported as "no such file".
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  char dir[] = "/tmp/cfr-plugin-loop-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string a = std::string(dir) + "/a.so", b = std::string(dir) + "/b.so";
  REQUIRE(::symlink(b.c_str(), a.c_str()) == 0);
  REQUIRE(::symlink(a.c_str(), b.c_str()) == 0);
  CHECK(refusal(a, registry) ==
        fmt::format("plugin {}: cannot be read ({})", a, std::strerror(ELOOP)));
  std::remove(a.c_str());
  std::remove(b.c_str());
  ::rmdir(dir);
}

// Each version appended fields to the description: test_plugin.c built
// against the version-1 and version-2 headers
// (tests/kernels/plugins/cuflash_roofline_plugin_v1.h, _v2.h) loads with
// what it declares, read at its version's stride, and counts no bytes of its
// own.
TEST_CASE("plugins of ABI versions 1 and 2 still load, as they declare", "[plugin]") {
  for (const char* version : {"abi_v1", "abi_v2"}) {
    INFO(version);
    KernelRegistry registry = KernelRegistry::with_builtin_kernels();
    const LoadedPlugin loaded = load_plugin(test_plugin(version), registry);
    REQUIRE(loaded.kernels.size() == 2);
    CHECK(loaded.kernels[1].kernel == "tiny_bwd");  // the second description, at its stride
    const KernelEntry* forward = registry.find("tiny_fwd");
    REQUIRE(forward != nullptr);
    CHECK(forward->description.traffic == TrafficModelKind::kv_reload);
    CHECK(forward->description.own_bytes == nullptr);
    CHECK(forward->description.tile_for(128, {9, 0}) == TileShape{64, 32});
    const KernelEntry* backward = registry.find("tiny_bwd");
    REQUIRE(backward != nullptr);
    CHECK(backward->description.traffic == TrafficModelKind::fa1_backward);
    CHECK(registry.forward_partner(*backward) == forward);
  }
}

namespace {

// B 2, 8 query heads, d 64, fp16, no mask; square unless a test changes it.
AttentionProblem served_problem() {
  return {2, 8, 1024, 64, false, DType::fp16};
}

// The problem with 2 K/V heads, 1000 keys and 4 queries (GQA decode).
AttentionProblem gqa_decode() {
  AttentionProblem p = served_problem();
  p.seq_len = 4;
  p.kv_len = 1000;
  p.kv_heads = 2;
  return p;
}

}  // namespace

// test_plugin.c's tiny_fwd declares CFR_SHAPE_KV_LEN | CFR_SHAPE_GQA and
// max_q_len 8192 (version 3); tiny_bwd no shape; bytes_plugin.c's
// tiny_bytes all three bits and any query length.
TEST_CASE("a plugin of ABI version 3 declares its served shapes; rows beyond them are skipped",
          "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  load_plugin(test_plugin("tiny"), registry);
  load_plugin(test_plugin("bytes"), registry);
  const ShapeSupport& forward = registry.find("tiny_fwd")->description.shapes;
  CHECK((forward.kv_len && forward.kv_heads && !forward.paged));
  CHECK(forward.max_q_len == 8192);
  CHECK(forward.served_shapes_reason.empty());
  const ShapeSupport& backward = registry.find("tiny_bwd")->description.shapes;
  CHECK((!backward.kv_len && !backward.kv_heads && !backward.paged));
  CHECK(backward.max_q_len == 0);
  const ShapeSupport& bytes = registry.find("tiny_bytes")->description.shapes;
  CHECK((bytes.kv_len && bytes.kv_heads && bytes.paged));
  CHECK(bytes.max_q_len == 0);

  const KernelDescription& tiny = registry.find("tiny_fwd")->description;
  CHECK_FALSE(shape_reason(tiny, served_problem()));
  CHECK_FALSE(shape_reason(tiny, gqa_decode()));
  AttentionProblem paged = gqa_decode();
  paged.page_size = 16;
  CHECK(
      shape_reason(tiny, paged) ==
      std::optional<std::string>("tiny_fwd reads a contiguous K/V cache, not pages of 16 tokens"));
  CHECK_FALSE(shape_reason(registry.find("tiny_bytes")->description, paged));
  AttentionProblem long_prefill = served_problem();
  long_prefill.seq_len = 16384;
  CHECK(shape_reason(tiny, long_prefill) ==
        std::optional<std::string>("tiny_fwd is built for at most 8192 query tokens, not 16384"));
}

TEST_CASE(
    "a kernel of ABI version 1 or 2 takes square shapes only, and the reason names the "
    "plugin",
    "[plugin]") {
  for (const auto& [plugin, version] : {std::pair{"abi_v1", 1}, std::pair{"abi_v2", 2}}) {
    INFO(plugin);
    KernelRegistry registry = KernelRegistry::with_builtin_kernels();
    const std::string path = test_plugin(plugin);
    load_plugin(path, registry);
    const KernelDescription& tiny = registry.find("tiny_fwd")->description;
    CHECK_FALSE(shape_reason(tiny, served_problem()));
    const std::string reason = fmt::format(
        "tiny_fwd: plugin {} uses ABI v{}, which has square shapes only", path, version);
    AttentionProblem more_keys = served_problem();
    more_keys.kv_len = 2048;
    AttentionProblem gqa = served_problem();
    gqa.kv_heads = 2;
    AttentionProblem paged = served_problem();
    paged.page_size = 16;
    for (const AttentionProblem& problem : {more_keys, gqa, paged, gqa_decode()}) {
      CHECK(shape_reason(tiny, problem) == std::optional<std::string>(reason));
    }
  }
}

// bytes_plugin.c: tiny_bytes counts 6 · B · H · N · d · element bytes, and
// answers wrongly on purpose for N = 100 ... 600.
TEST_CASE("a kernel's hbm_bytes callback answers per problem, checked per problem", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  load_plugin(test_plugin("bytes"), registry);
  const KernelEntry* forward = registry.find("tiny_bytes");
  REQUIRE(forward != nullptr);
  CHECK(forward->description.traffic == TrafficModelKind::plugin);
  REQUIRE(forward->description.own_bytes != nullptr);
  const OwnByteCount& count = *forward->description.own_bytes;
  AttentionProblem problem{2, 8, 1024, 64, false, DType::fp32};
  CHECK(std::get<double>(count.hbm_bytes(problem)) == 6.0 * 2 * 8 * 1024 * 64 * 4);
  const KernelEntry* backward = registry.find("tiny_bytes_bwd");
  REQUIRE(backward != nullptr);
  CHECK(backward->description.traffic == TrafficModelKind::plugin);
  problem.dtype = DType::fp16;
  CHECK(std::get<double>(backward->description.own_bytes->hbm_bytes(problem)) ==
        10.0 * 2 * 8 * 1024 * 64 * 2);

  const std::pair<std::int64_t, const char*> wrong[] = {
      {100, "tiny_bytes: its HBM byte count for this shape, nan B is not a byte count"},
      {200, "tiny_bytes: its HBM byte count for this shape, -4096 B is not a byte count"},
      {300, "tiny_bytes: its HBM byte count for this shape, 0 B is not a byte count"},
      {600, "tiny_bytes: its HBM byte count for this shape, inf B is not a byte count"},
      {400, "tiny_bytes: no HBM byte count for this shape: tiny_bytes counts no N=400"},
      {500,
       "tiny_bytes: no HBM byte count for this shape: hbm_bytes returned an error and no "
       "message"},
  };
  for (const auto& [seq_len, words] : wrong) {
    INFO(seq_len);
    problem.seq_len = seq_len;
    const ByteCount checked = checked_byte_count(count, "tiny_bytes", problem);
    REQUIRE(std::holds_alternative<std::string>(checked));
    CHECK(std::get<std::string>(checked).find(words) == 0);
  }
  // The ABI's shape holds ints: a larger dimension is not handed to the plugin.
  problem.seq_len = std::int64_t{1} << 31;
  CHECK(std::get<std::string>(count.hbm_bytes(problem)) ==
        "a dimension beyond the plugin ABI's int shape");
  problem.seq_len = 1024;
  problem.kv_len = std::int64_t{1} << 31;
  CHECK(std::get<std::string>(count.hbm_bytes(problem)) ==
        "a dimension beyond the plugin ABI's int shape");
}

// bytes_plugin.c's tiny_bytes counts (2 · H · N + 4 · Hkv · Nk) · B · d ·
// element bytes, plus 4 · B · ceil(Nk / page_size) of page table: a count
// that only the version-3 fields of its shape give. Built against version
// 2's header (bytes_v2), it knows square shapes only and is asked for no
// other.
TEST_CASE("a version-3 kernel's hbm_bytes is given the K/V length, K/V heads and page size",
          "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  load_plugin(test_plugin("bytes"), registry);
  const KernelDescription& v3 = registry.find("tiny_bytes")->description;
  AttentionProblem problem = gqa_decode();  // B 2, H 8, N 4, Hkv 2, Nk 1000, d 64, fp16
  problem.page_size = 16;
  const double q = 2.0 * 8 * 4 * 64, kv = 2.0 * 2 * 1000 * 64, table = 4.0 * 2 * 63;
  CHECK(std::get<double>(v3.own_bytes->hbm_bytes(problem)) == (2 * q + 4 * kv) * 2 + table);
  problem.page_size = 0;
  CHECK(std::get<double>(v3.own_bytes->hbm_bytes(problem)) == (2 * q + 4 * kv) * 2);
  // A square shape: kv_len and kv_heads resolved (not 0), so 6 · B · H · N · d · 2.
  CHECK(std::get<double>(v3.own_bytes->hbm_bytes(served_problem())) == 6.0 * 2 * 8 * 1024 * 64 * 2);

  KernelRegistry old = KernelRegistry::with_builtin_kernels();
  const std::string path = test_plugin("bytes_v2");
  load_plugin(path, old);
  const KernelDescription& v2 = old.find("tiny_bytes")->description;
  CHECK(std::get<double>(v2.own_bytes->hbm_bytes(served_problem())) == 6.0 * 2 * 8 * 1024 * 64 * 2);
  CHECK(shape_reason(v2, gqa_decode()) ==
        std::optional<std::string>(
            fmt::format("tiny_bytes: plugin {} uses ABI v2, which has square shapes only", path)));
}
