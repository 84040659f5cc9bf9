// `--plugin` and `--list` of `model` and `sweep`, without a GPU: plugin rows
// against the traffic model, the provenance they get, the refusals.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

// tests/kernels/plugins/meson.build: test_plugin.c, valid or with one defect.
std::string test_plugin(const std::string& name) {
  return std::string(CFR_TEST_PLUGIN_DIR) + "/libcfr_test_plugin_" + name + ".so";
}

}  // namespace

// tiny_fwd declares kv_reload with tile 64x64 at d = 64 (test_plugin.c). At
// B 1, H 8, N 1024, fp16, no mask each head reads Q and writes O once (2 ·
// 1024 · 64 · 2 B = 262144 B), reads K and V once per each of the 16 Q blocks
// (2 · 16 · 1024 · 128 B = 4194304 B) and writes LSE (1024 · 4 B = 4096 B):
// 4460544 B a head, 35684352 B for 8 heads.
TEST_CASE("cli: model --plugin rows follow the plugin's declared tile and traffic model") {
  const std::string plugin = test_plugin("tiny");
  const CliResult r = run_cli("model --plugin " + plugin +
                              " --kernels tiny_fwd,fa1_scalar --seq-lens 1024 --head-dims 64 "
                              "--json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 2);
  const json& row = doc["results"][0];
  CHECK(row["kernel"] == "tiny_fwd");
  CHECK(row["status"] == "ok");
  CHECK(row["tile"] == json{{"br", 64}, {"bc", 64}});
  CHECK(row["compute_unit"] == "fp32_simt");
  CHECK(row["traffic"]["model"] == "kv_reload");
  CHECK(row["traffic"]["bytes"].get<double>() == 35684352.0);
  const json& plugins = doc["provenance"]["plugins"];
  REQUIRE(plugins.size() == 2);  // tiny_fwd and tiny_bwd
  CHECK(plugins[0]["kernel"] == "tiny_fwd");
  CHECK(plugins[0]["version"] == "0.1-test");
  CHECK(plugins[0]["file"] == plugin);
  CHECK(plugins[0]["sha256"].get<std::string>().size() == 64);

  // audit re-derives a plugin row from what it records, like any row.
  const std::string report = temp_path("plugin-model.json");
  REQUIRE(run_cli("model --plugin " + plugin + " --kernels tiny_fwd --backward --json " + report)
              .exit_code == 0);
  const CliResult audit = run_cli("audit " + report);
  CHECK(audit.exit_code == 0);
  std::remove(report.c_str());
}

// docs/plugins.md's walk-through: the example plugin's rows without a GPU, tile
// and traffic model as example_plugin.cu declares them.
TEST_CASE("cli: the walk-through's model command gives the example plugin's rows") {
  const CliResult r = run_cli(std::string("model --gpu h200 --plugin ") + CFR_EXAMPLE_PLUGIN +
                              " --kernels example_simt,fa1_scalar --seq-lens 4096 --head-dims "
                              "64,128 --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 4);
  for (const json& row : doc["results"]) {
    CHECK(row["status"] == "ok");
    if (row["kernel"] != "example_simt") continue;
    CHECK(row["tile"] == json{{"br", 64}, {"bc", 32}});
    CHECK(row["compute_unit"] == "fp32_simt");
    CHECK(row["traffic"]["model"] == "kv_reload");
  }
  CHECK(doc["provenance"]["plugins"][0]["version"] == "1.0.0");
}

TEST_CASE("cli: --list names every kernel with its origin") {
  const std::string plugin = test_plugin("tiny");
  const CliResult r = run_cli("sweep --plugin " + plugin + " --list");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("fa2_mma") != std::string::npos);
  CHECK(r.out.find("built in") != std::string::npos);
  CHECK(r.out.find("tiny_bwd") != std::string::npos);
  CHECK(r.out.find("plugin " + plugin) != std::string::npos);
  // The example plugin (CUDA code, linked to libcudart) loads without a GPU too.
  const CliResult example = run_cli(std::string("model --list --plugin ") + CFR_EXAMPLE_PLUGIN);
  REQUIRE(example.exit_code == 0);
  CHECK(example.out.find("example_simt") != std::string::npos);
}

TEST_CASE("cli: a bad plugin is one line and exit 2, for model and sweep") {
  const std::string bad = test_plugin("bad_tile");
  for (const char* command : {"model", "sweep"}) {
    INFO(command);
    const CliResult r = run_cli(std::string(command) + " --plugin " + bad + " --json -");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "cuflash-roofline: error: plugin " + bad +
                       ": kernel 'tiny_fwd': tile 64x0 at head dim 64 cannot be\n");
  }
  const std::string tiny = test_plugin("tiny");
  const CliResult twice = run_cli("model --plugin " + tiny + " --plugin " + tiny);
  CHECK(twice.exit_code == 2);
  CHECK(twice.err.find("the name is taken (plugin " + tiny + ")") != std::string::npos);
}

TEST_CASE("cli: --kernels names a plugin kernel only with its plugin") {
  const CliResult r = run_cli("model --kernels tiny_fwd --json -");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown kernel 'tiny_fwd'") != std::string::npos);
}
