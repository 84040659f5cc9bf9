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
  CHECK(message == "tiny_fwd launches nothing (asked for N=1000)");

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
      {"abi_version", "built for plugin ABI version 100, this tool reads versions 1 and 2"},
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

// ABI version 2 appended hbm_bytes to the description: test_plugin.c built
// against the version-1 header (tests/kernels/plugins/cuflash_roofline_plugin_v1.h)
// loads with what it declares, and counts no bytes of its own.
TEST_CASE("a plugin of ABI version 1 still loads, as it declares", "[plugin]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  const LoadedPlugin loaded = load_plugin(test_plugin("abi_v1"), registry);
  REQUIRE(loaded.kernels.size() == 2);
  CHECK(loaded.kernels[1].kernel == "tiny_bwd");  // the second description, at v1's stride
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
}
