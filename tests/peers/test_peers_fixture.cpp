// A report peers/torch_sdpa.py recorded with torch on a GPU (the fixture, see
// fixtures/README.md for its command) read by this build's tools: `audit`
// recomputes it and finds it consistent and auditable, `table`, `compare` and
// `plot` accept it, and a tampered copy fails `audit`. And the hand-built raw
// samples of served shapes, imported by this build: their problems reach the
// report, K/V bytes count per K/V head, the paged rows stay skipped with the
// script's reason.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "peer_fixture.hpp"

namespace {

using nlohmann::json;

// Single-quoted for the shell (appending, not operator+ on a literal: GCC 12
// warns falsely, -Wrestrict, on "'" + std::string).
std::string quoted(const std::string& path) {
  std::string out(1, '\'');
  out += path;
  out += '\'';
  return out;
}

json fixture() {
  return json::parse(read_file(peer_fixture_path()));
}

// The fixture changed by `edit`, written where `audit` can read it.
std::string tampered_copy(const std::string& name, const std::function<void(json&)>& edit) {
  json report = fixture();
  edit(report);
  const std::string path = temp_path(name);
  std::ofstream(path) << report.dump(2);
  return path;
}

json& first_ok_row(json& report) {
  for (json& row : report["results"]) {
    if (row["status"] == "ok") return row;
  }
  FAIL("the fixture has no ok row");
  return report;
}

}  // namespace

TEST_CASE("peers fixture: audit recomputes every figure and finds it consistent, auditable") {
  const CliResult audit = run_cli("audit " + quoted(peer_fixture_path()));
  INFO(audit.out << audit.err);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find(": consistent: ") != std::string::npos);
  const json report = fixture();
  CHECK(report["provenance"]["source"] == "measured");
  CHECK(report["provenance"]["auditable"] == true);
  CHECK(report["tool"]["name"] == "cuflash-roofline/peers/torch_sdpa");
  CHECK_FALSE(report["provenance"]["environment"]["torch"].get<std::string>().empty());
  CHECK_FALSE(report["provenance"]["environment"]["cudnn"].get<std::string>().empty());
}

TEST_CASE("peers fixture: it holds the recorded axes, every backend, and a timed flash row") {
  // fixtures/README.md: N 256,1000, d 64, fp16, causal and not, all backends
  const json report = fixture();
  std::set<std::string> kernels;
  std::set<std::pair<std::int64_t, bool>> shapes;
  bool flash_timed = false;
  for (const json& row : report["results"]) {
    kernels.insert(row["kernel"].get<std::string>());
    shapes.insert({row["seq_len"].get<std::int64_t>(), row["causal"].get<bool>()});
    CHECK(row["head_dim"] == 64);
    CHECK(row["dtype"] == "fp16");
    CHECK(row["traffic"]["model"] == "compulsory");
    if (row["status"] != "ok") CHECK_FALSE(row["reason"].get<std::string>().empty());
    flash_timed = flash_timed || (row["kernel"] == "torch_sdpa_flash" && row["status"] == "ok");
  }
  CHECK(kernels == std::set<std::string>{"torch_sdpa_flash", "torch_sdpa_cudnn",
                                         "torch_sdpa_efficient", "torch_sdpa_math"});
  CHECK(shapes == std::set<std::pair<std::int64_t, bool>>{
                      {256, false}, {256, true}, {1000, false}, {1000, true}});
  CHECK(flash_timed);
}

TEST_CASE("peers fixture: table, compare and plot accept it") {
  const std::string path = quoted(peer_fixture_path());
  const CliResult table = run_cli("table " + path);
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("torch_sdpa_flash") != std::string::npos);
  CHECK(table.out.find("provenance: measured, auditable: true") != std::string::npos);
  const CliResult compare = run_cli("compare " + path + " " + path);
  CHECK(compare.exit_code == 0);
  CHECK(compare.out.find("SAME") != std::string::npos);
  const std::string svg = temp_path("peers-fixture.svg");
  CHECK(run_cli("plot " + path + " --out " + quoted(svg)).exit_code == 0);
  CHECK(read_file(svg).find("torch_sdpa_flash") != std::string::npos);
  std::remove(svg.c_str());
}

TEST_CASE("peers fixture: compare --by shape sets every backend against every other of a shape") {
  const std::string path = quoted(peer_fixture_path());
  // Each shape's k rows pair with each of the other side's k: k x k rows.
  std::map<std::pair<std::int64_t, bool>, std::size_t> rows_per_shape;
  const json report = fixture();
  for (const json& row : report["results"]) {
    ++rows_per_shape[{row["seq_len"].get<std::int64_t>(), row["causal"].get<bool>()}];
  }
  std::size_t pairs = 0;
  for (const auto& [shape, count] : rows_per_shape) pairs += count * count;
  const std::string json_out = temp_path("peers-by-shape.json");
  const CliResult by_shape =
      run_cli("compare " + path + " " + path + " --by shape --json " + quoted(json_out));
  INFO(by_shape.out << by_shape.err);
  CHECK(by_shape.exit_code == 0);
  CHECK(by_shape.out.find("torch_sdpa_cudnn vs torch_sdpa_flash") != std::string::npos);
  const json document = json::parse(read_file(json_out));
  CHECK(document["pairs"][0]["rows"].size() == pairs);
  std::remove(json_out.c_str());

  const CliResult both = run_cli("compare " + path + " " + path +
                                 " --by shape --match-kernel torch_sdpa_flash=torch_sdpa_cudnn");
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--match-kernel torch_sdpa_flash=torch_sdpa_cudnn: not with --by shape") !=
        std::string::npos);
  const CliResult unknown = run_cli("compare " + path + " " + path + " --by size");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("--by") != std::string::npos);
}

TEST_CASE("peers fixture: a tampered copy fails audit") {
  const std::function<void(json&)> edits[] = {
      [](json& r) {
        for (json& sample : first_ok_row(r)["timing"]["samples_ms"])
          sample = sample.get<double>() * 2;
      },
      [](json& r) { first_ok_row(r)["correctness"]["passed"] = false; },
      [](json& r) { r["tool"]["git_dirty"] = true; },
      [](json& r) { first_ok_row(r)["flops"]["exact"] = 1.0; },
  };
  int index = 0;
  for (const auto& edit : edits) {
    const std::string path = tampered_copy("peers-tampered-" + std::to_string(index++), edit);
    const CliResult audit = run_cli("audit " + quoted(path));
    INFO(audit.out);
    CHECK(audit.exit_code == 1);
    std::remove(path.c_str());
  }
}

namespace {

// The served fixture imported by this build's import-samples (--gpu h200).
json imported_served(const std::string& out) {
  const CliResult result = run_cli("import-samples " + quoted(served_samples_path()) +
                                   " --gpu h200 --json " + quoted(out));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  return json::parse(read_file(out));
}

}  // namespace

TEST_CASE("served raw samples: import-samples takes GQA, Nq != Nk and paged rows; audit agrees") {
  const std::string path = temp_path("peers-served.json");
  const json report = imported_served(path);
  const CliResult audit = run_cli("audit " + quoted(path));
  INFO(audit.out << audit.err);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find(": consistent: 8 rows") != std::string::npos);
  int timed = 0;
  for (const json& row : report["results"]) {
    INFO(row.dump());
    if (row.value("page_size", 0) > 0) {
      // peers/torch_peer/backends.py PAGED_REASON: no silent skip, no timing
      CHECK(row["status"] == "skipped");
      CHECK(row["reason"] == "torch SDPA reads a contiguous K/V cache");
      CHECK_FALSE(row.contains("timing"));
    } else if (row["causal"] == true && row["seq_len"] > row["kv_len"]) {
      // the tool's refusal (problem_out_of_range) stands over the script's skip
      CHECK(row["status"] == "skipped");
      CHECK(row["reason"].get<std::string>().find("bottom-right aligned): refused") !=
            std::string::npos);
    } else {
      // docs/model.md section 7: Q and O per query head, K and V per K/V head (fp16)
      const auto b = row["batch"].get<double>(), h = row["heads"].get<double>();
      const auto d = row["head_dim"].get<double>();
      const double q_and_o = 2 * b * h * row["seq_len"].get<double>() * d * 2;
      const double k_and_v =
          2 * b * row["kv_heads"].get<double>() * row["kv_len"].get<double>() * d * 2;
      CHECK(row["kv_heads"] == 8);
      CHECK(row["kv_len"] == 32768);
      CHECK(row["status"] == "ok");
      CHECK(row["traffic"]["bytes"].get<double>() == q_and_o + k_and_v);
      ++timed;
    }
  }
  CHECK(timed == 4);
  std::remove(path.c_str());
}

TEST_CASE(
    "served raw samples: compare --by shape sets the backends of a served shape side by side") {
  const std::string path = temp_path("peers-served-compare.json");
  imported_served(path);
  const CliResult by_shape =
      run_cli("compare " + quoted(path) + " " + quoted(path) + " --by shape");
  INFO(by_shape.out << by_shape.err);
  CHECK(by_shape.exit_code == 0);
  CHECK(by_shape.out.find("torch_sdpa_cudnn vs torch_sdpa_flash") != std::string::npos);
  std::remove(path.c_str());
}
