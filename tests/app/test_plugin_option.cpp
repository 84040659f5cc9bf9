// `--plugin` and `--list` of `model` and `sweep`, without a GPU: plugin rows
// against the traffic model, the provenance they get, the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// A report file of `model` with these arguments, and the document.
json model_report_file(const std::string& arguments, const std::string& path) {
  const CliResult r = run_cli("model " + arguments + " --json " + path);
  REQUIRE(r.exit_code == 0);
  return json::parse(read_file(path));
}

void write_json(const std::string& path, const json& doc) {
  std::ofstream(path) << doc.dump(2);
}

}  // namespace

// bytes_plugin.c: tiny_bytes counts 6 · B · H · N · d · element bytes itself
// (traffic model "plugin"), tiny_bytes_bwd 10 of those. At B 1, H 8, N 1024,
// d 64, fp16: 6 · 8 · 1024 · 64 · 2 B = 6291456 B and 10485760 B. The
// compulsory floor beside it is the tool's: 4 · 8 · 1024 · 64 · 2 = 4194304 B
// forward. AI and the ridge distance follow from the plugin's bytes.
TEST_CASE("cli: model --plugin rows of a kernel that counts its own bytes carry its count") {
  const std::string plugin = test_plugin("bytes");
  const CliResult r = run_cli("model --plugin " + plugin +
                              " --kernels tiny_bytes,tiny_bytes_bwd --seq-lens 1024 --head-dims 64 "
                              "--json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 2);
  const std::pair<const char*, double> expected[] = {{"tiny_bytes", 6291456.0},
                                                     {"tiny_bytes_bwd", 10485760.0}};
  for (std::size_t i = 0; i < 2; ++i) {
    const json& row = doc["results"][i];
    INFO(row.dump());
    CHECK(row["kernel"] == expected[i].first);
    CHECK(row["status"] == "ok");
    const json& traffic = row["traffic"];
    CHECK(traffic["model"] == "plugin");
    CHECK(traffic["bytes"].get<double>() == expected[i].second);
    CHECK(traffic["breakdown"] == json::object());
    CHECK(traffic["by_model"]["plugin"].get<double>() == expected[i].second);
    CHECK(traffic["dram_model"] == "plugin");
    CHECK_FALSE(traffic.contains("l2_model"));  // the L2-aware model needs a built-in layout
    const double flops = row["flops"]["exact"].get<double>();
    CHECK(row["ai"].get<double>() == Approx(flops / expected[i].second));
    CHECK(row["ridge_distance"].get<double>() ==
          Approx(row["ridge"].get<double>() / (flops / expected[i].second)));
  }
  CHECK(doc["results"][0]["traffic"]["compulsory_bytes"].get<double>() == 4194304.0);
}

TEST_CASE("cli: a byte count that is no count fails its row in one line; the others go on") {
  const std::string plugin = test_plugin("bytes");
  const CliResult r = run_cli("model --plugin " + plugin +
                              " --kernels tiny_bytes --seq-lens 100,200,300,400,500,600,1024 "
                              "--head-dims 64 --json -");
  CHECK(r.exit_code == 1);  // a failed row is a verdict
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 7);
  // bytes_plugin.c's wrong answers, by N.
  const char* reasons[] = {
      "tiny_bytes: its HBM byte count for this shape, nan B is not a byte count",
      "tiny_bytes: its HBM byte count for this shape, -4096 B is not a byte count",
      "tiny_bytes: its HBM byte count for this shape, 0 B is not a byte count",
      "tiny_bytes: no HBM byte count for this shape: tiny_bytes counts no N=400",
      "tiny_bytes: no HBM byte count for this shape: hbm_bytes returned an error and no message",
      "tiny_bytes: its HBM byte count for this shape, inf B is not a byte count",
  };
  for (std::size_t i = 0; i < 6; ++i) {
    const json& row = doc["results"][i];
    INFO(row.dump());
    CHECK(row["status"] == "failed");
    CHECK(row["reason"].get<std::string>().find(reasons[i]) == 0);
    CHECK(row["reason"].get<std::string>().find('\n') == std::string::npos);
    CHECK_FALSE(row.contains("traffic"));
  }
  CHECK(doc["results"][6]["status"] == "ok");
}

// example_own_bytes is example_simt counting its own bytes by walking its
// loop (example_plugin.cu); example_simt names kv_reload with the same 64 x 32
// tile. Two counts made two ways must agree, causal or not, N a multiple of
// the tiles or not.
TEST_CASE("cli: the example's own byte count is what kv_reload gives the same kernel") {
  const CliResult r =
      run_cli(std::string("model --gpu h200 --plugin ") + CFR_EXAMPLE_PLUGIN + " --plugin " +
              CFR_EXAMPLE_BYTES_PLUGIN +
              " --kernels example_simt,example_own_bytes --seq-lens 1000,4096 --head-dims 64,128 "
              "--both --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  std::map<std::string, std::vector<double>> bytes;
  for (const json& row : doc["results"]) {
    REQUIRE(row["status"] == "ok");
    bytes[row["kernel"]].push_back(row["traffic"]["bytes"].get<double>());
    CHECK(row["traffic"]["model"] == (row["kernel"] == "example_simt" ? "kv_reload" : "plugin"));
  }
  REQUIRE(bytes["example_own_bytes"].size() == 8);
  CHECK(bytes["example_own_bytes"] == bytes["example_simt"]);
}

TEST_CASE("cli: audit counts a plugin row's bytes again only with that plugin") {
  const std::string plugin = test_plugin("bytes");
  const std::string report = temp_path("plugin-bytes.json");
  const json doc = model_report_file(
      "--plugin " + plugin + " --kernels tiny_bytes --seq-lens 1024,2048 --head-dims 64", report);

  // Without the plugin: consistent, every figure recomputed from the recorded
  // count, and a note that the count itself was not.
  const CliResult alone = run_cli("audit " + report);
  CHECK(alone.exit_code == 0);
  CHECK(alone.out.find("tiny_bytes: traffic.bytes of 2 row(s) is the kernel's own count") !=
        std::string::npos);
  CHECK(alone.out.find("`audit --plugin " + plugin + "` counts it again") != std::string::npos);

  const CliResult again = run_cli("audit --plugin " + plugin + " " + report);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("tiny_bytes: traffic.bytes of 2 row(s) counted again by the plugin's "
                       "hbm_bytes") != std::string::npos);

  // Another file than the report's plugin: refused, one line.
  const std::string other = test_plugin("tiny");
  const CliResult wrong = run_cli("audit --plugin " + other + " " + report);
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.out.empty());
  CHECK(wrong.err.find("cuflash-roofline: error: --plugin " + other + ": its SHA-256 ") == 0);
  CHECK(wrong.err.find("is no plugin's in the reports' provenance.plugins") != std::string::npos);
  CHECK(std::count(wrong.err.begin(), wrong.err.end(), '\n') == 1);
  // It names what the reports do record, each plugin file once, though a plugin of two
  // kernels is recorded twice.
  json two_kernels = doc;
  json second = two_kernels["provenance"]["plugins"][0];
  second["kernel"] = "tiny_bytes_again";
  two_kernels["provenance"]["plugins"].push_back(second);
  const std::string twice = temp_path("plugin-bytes-twice.json");
  write_json(twice, two_kernels);
  const CliResult named = run_cli("audit --plugin " + other + " " + report + " " + twice);
  INFO(named.err);
  CHECK(named.exit_code == 2);
  const std::string sha = doc["provenance"]["plugins"][0]["sha256"];
  const std::string in_report = report + " records " + sha + " for ";
  const std::string in_twice = twice + " records " + sha + " for ";
  CHECK(named.err.find(in_report) != std::string::npos);
  REQUIRE(named.err.find(in_twice) != std::string::npos);
  CHECK(named.err.find(in_twice) == named.err.rfind(in_twice));
  std::remove(twice.c_str());

  // A row that says `plugin` for a kernel no plugin in provenance brought.
  json orphan = doc;
  orphan["provenance"]["plugins"] = json::array();
  write_json(report, orphan);
  const CliResult no_origin = run_cli("audit " + report);
  CHECK(no_origin.exit_code == 1);
  CHECK(no_origin.out.find("provenance.plugins names no plugin that brought tiny_bytes") !=
        std::string::npos);
  std::remove(report.c_str());
}

// bytes_twice counts 12 · B · H · N · d · e. A report of its rows whose
// provenance names the bytes plugin's SHA-256 has every figure consistent
// with its count, so only counting again can tell that count is not the
// named plugin's.
TEST_CASE("cli: audit --plugin finds a count that is not the named plugin's") {
  const std::string plugin = test_plugin("bytes");
  const std::string report = temp_path("plugin-bytes-twice.json");
  const json honest = model_report_file(
      "--plugin " + plugin + " --kernels tiny_bytes --seq-lens 1024 --head-dims 64", report);
  json forged = model_report_file("--plugin " + test_plugin("bytes_twice") +
                                      " --kernels tiny_bytes --seq-lens 1024 --head-dims 64",
                                  report);
  forged["provenance"]["plugins"] = honest["provenance"]["plugins"];
  write_json(report, forged);
  CHECK(run_cli("audit " + report).exit_code == 0);  // consistent: the count is an input
  const CliResult again = run_cli("audit --plugin " + plugin + " " + report);
  CHECK(again.exit_code == 1);
  CHECK(again.out.find("traffic.bytes: report 12582912, recomputed 6291456") != std::string::npos);
  std::remove(report.c_str());
}

// ABI versions 1 and 2: test_plugin.c built against their headers gives the
// same square rows as the version-3 build (35684352 B, the first test case
// above).
TEST_CASE("cli: plugins of ABI versions 1 and 2 still give their rows") {
  for (const char* version : {"abi_v1", "abi_v2"}) {
    INFO(version);
    const CliResult r = run_cli("model --plugin " + test_plugin(version) +
                                " --kernels tiny_fwd --seq-lens 1024 --head-dims 64 --json -");
    REQUIRE(r.exit_code == 0);
    const json row = json::parse(r.out)["results"][0];
    CHECK(row["status"] == "ok");
    CHECK(row["traffic"]["model"] == "kv_reload");
    CHECK(row["traffic"]["bytes"].get<double>() == 35684352.0);
  }
}

// Issue 25: served shapes reach a version-3 plugin and skip an older one.
// bytes_v2 is bytes_plugin.c built against ABI version 2: square only. At
// B 1, H 8, N 1024, d 64, fp16 its square row counts 6 · 8 · 1024 · 64 · 2 B
// = 6291456 B; its GQA row (2 K/V heads) is skipped, and the run goes on.
TEST_CASE("cli: a version-2 plugin's rows of a served shape are skipped with the reason") {
  const std::string plugin = test_plugin("bytes_v2");
  const CliResult r = run_cli("model --plugin " + plugin +
                              " --kernels tiny_bytes --heads 8 --kv-heads 2,8 --seq-lens 1024 "
                              "--head-dims 64 --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 2);
  const json& gqa = doc["results"][0];
  CHECK(gqa["kv_heads"] == 2);
  CHECK(gqa["status"] == "skipped");
  CHECK(gqa["reason"] ==
        "tiny_bytes: plugin " + plugin + " uses ABI v2, which has square shapes only");
  const json& square = doc["results"][1];
  CHECK(square["status"] == "ok");
  CHECK(square["traffic"]["bytes"].get<double>() == 6291456.0);
}

// bytes_plugin.c (version 3) counts (2 · H · N + 4 · Hkv · Nk) · B · d · 2 B
// + 4 · B · ceil(Nk / page) B. At B 1, H 8, Hkv 2, N 4, Nk 1000, d 64, page
// 16: (2 · 8 · 4 + 4 · 2 · 1000) · 64 · 2 + 4 · 63 = 1032192 + 252 =
// 1032444 B. audit --plugin counts it again from what the row records, so
// the row's K/V fields must reach the plugin there too.
TEST_CASE(
    "cli: a version-3 plugin's own count is given the row's K/V fields, in model and "
    "audit") {
  const std::string plugin = test_plugin("bytes");
  const std::string report = temp_path("plugin-served.json");
  const json doc = model_report_file("--plugin " + plugin +
                                         " --kernels tiny_bytes --heads 8 --kv-heads 2 --q-lens 4 "
                                         "--kv-lens 1000 --page-size 16 --head-dims 64",
                                     report);
  REQUIRE(doc["results"].size() == 1);
  const json& row = doc["results"][0];
  INFO(row.dump());
  CHECK(row["status"] == "ok");
  CHECK(row["traffic"]["bytes"].get<double>() == 1032444.0);
  const CliResult again = run_cli("audit --plugin " + plugin + " " + report);
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("tiny_bytes: traffic.bytes of 1 row(s) counted again by the plugin's "
                       "hbm_bytes") != std::string::npos);
  std::remove(report.c_str());
}

// The example (ABI version 3) takes K/V lengths and GQA: its own count of a
// decode or a cache-continuing prefill, causal (bottom-right) or not, is
// what kv_reload gives example_simt, GQA or not.
TEST_CASE("cli: the example's own byte count is kv_reload's on the served shapes too") {
  const CliResult r = run_cli(
      std::string("model --gpu h200 --plugin ") + CFR_EXAMPLE_PLUGIN + " --plugin " +
      CFR_EXAMPLE_BYTES_PLUGIN +
      " --kernels example_simt,example_own_bytes --heads 8 --kv-heads 2,8 --q-lens 1,100,1000 "
      "--kv-lens 4096,4100 --head-dims 64,128 --both --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  std::map<std::string, std::vector<double>> bytes;
  for (const json& row : doc["results"]) {
    INFO(row.dump());
    REQUIRE(row["status"] == "ok");
    bytes[row["kernel"]].push_back(row["traffic"]["bytes"].get<double>());
  }
  REQUIRE(bytes["example_own_bytes"].size() == 2 * 3 * 2 * 2 * 2);
  CHECK(bytes["example_own_bytes"] == bytes["example_simt"]);
}

TEST_CASE("cli: --plugin '' is refused in one line naming the option") {
  for (const char* command : {"model", "sweep", "audit"}) {
    INFO(command);
    const std::string rest = std::string(command) == "audit" ? " report.json" : "";
    const CliResult r = run_cli(std::string(command) + " --plugin ''" + rest);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("--plugin") != std::string::npos);
    CHECK(r.err.find("empty") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}
