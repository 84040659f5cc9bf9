// Issue 21's hostile plugins (tests/kernels/plugins/meson.build): a plugin
// that prints to stdout while it is loaded, kernel_counts far beyond the
// kernels array, and a --plugin path that is a symbolic-link loop. Each is
// either harmless or one line and exit 2; none crashes the tool.
#include <unistd.h>

#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "adversarial.hpp"

using nlohmann::json;

namespace {

std::string test_plugin(const std::string& name) {
  return std::string(CFR_TEST_PLUGIN_DIR) + "/libcfr_test_plugin_" + name + ".so";
}

}  // namespace

TEST_CASE("plugins: what a plugin prints while loaded never reaches stdout", "[plugins]") {
  // Issue 21: a plugin whose constructor printed put its text in the JSON
  // that `--json -` wrote to stdout.
  const std::string plugin = test_plugin("prints");
  const CliResult r =
      run({"model", "--plugin", plugin, "--kernels", "tiny_fwd", "--gpu", "h200", "--json", "-"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["results"].size() > 0);
  CHECK(r.out.find("test plugin") == std::string::npos);
  // Its text goes to stderr instead, all three lines of it.
  for (const char* line : {"test plugin constructor: buffered", "test plugin constructor: write(1)",
                           "test plugin: asked for its kernels"}) {
    CHECK(r.err.find(line) != std::string::npos);
  }
}

TEST_CASE("plugins: a kernel_count beyond the kernels array is refused, naming the count",
          "[plugins]") {
  // Issue 21: 1,000 and 100,000 died of a bus error, INT_MAX of std::bad_alloc.
  for (const char* count : {"1000", "100000", "2147483647"}) {
    INFO(count);
    const std::string plugin = test_plugin(std::string("count_") + count);
    for (const char* command : {"model", "sweep"}) {
      check_refused(run({command, "--plugin", plugin, "--list"}),
                    {"plugin " + plugin + ": ", "kernel_count " + std::string(count)});
    }
  }
  // One past the array lies in the plugin's own memory: the description read
  // there is checked as it is read, and refused.
  const std::string plugin = test_plugin("count_3");
  check_refused(run({"model", "--plugin", plugin, "--list"}),
                {"plugin " + plugin + ": kernel #2 (of kernel_count 3)"});
}

TEST_CASE("plugins: a --plugin path that is a symbolic-link loop says so", "[plugins]") {
  // Issue 21: the loop was reported as "no such file".
  Scratch scratch;
  const std::string a = scratch.path("a.so"), b = scratch.path("b.so");
  REQUIRE(::symlink(b.c_str(), a.c_str()) == 0);
  REQUIRE(::symlink(a.c_str(), b.c_str()) == 0);
  check_refused(run({"model", "--plugin", a}), {"plugin " + a, std::strerror(ELOOP)});
}
