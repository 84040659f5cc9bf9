#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tests/builtin_kernels.hpp"

using nlohmann::json;

TEST_CASE("cli: sweep without a CUDA device runs the model, says so loudly, exits 0") {
  const std::string out = temp_path("sweep.json");
  const CliResult r = run_cli("sweep --gpu a100 --causal --json " + out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("NOTHING WAS MEASURED") != std::string::npos);
  const json doc = json::parse(read_file(out));
  CHECK(doc["provenance"]["source"] == "model");
  CHECK(doc["provenance"]["auditable"] == false);
  CHECK(doc["provenance"]["reasons"][1] == "no CUDA device on this machine: nothing was measured");
  // The seed's default axes: B = 1, H = 8, d = 64, N 1024…16384 (5 lengths), every forward
  // kernel of the catalog that takes them.
  const cfr::AttentionProblem problem{1, 8, 1024, 64, true, cfr::DType::fp16};
  REQUIRE(doc["results"].size() == 5 * cfr::test::kernels_planned(problem, false).size());
  for (const json& row : doc["results"]) {
    CHECK(row["causal"] == true);
    CHECK(row["batch"] == 1);
    CHECK(row["heads"] == 8);
    CHECK(row["head_dim"] == 64);
    CHECK_FALSE(row.contains("timing"));
  }
  std::remove(out.c_str());
}

TEST_CASE("cli: sweep --require-gpu fails without a device") {
  const CliResult required = run_cli("sweep --gpu a100 --require-gpu");
  CHECK(required.exit_code == 3);
  CHECK(required.err == "cuflash-roofline: error: --require-gpu: no CUDA device on this machine\n");
}

TEST_CASE("cli: sweep with --gpu auto and no device falls back to the model's default ceiling") {
  // Issue 12: it failed ("no CUDA device here to match") where the README
  // promises the model fallback. The default is `model`'s: a100.
  const CliResult r = run_cli("sweep --seq-lens 1024 --json -");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("NOTE: --gpu auto: no device to match; the 'a100' ceiling is the model's "
                   "default (name another with --gpu)") != std::string::npos);
  const json doc = json::parse(r.out);
  CHECK(doc["ceiling"]["gpu"] == "a100");
  CHECK(doc["provenance"]["source"] == "model");
}

TEST_CASE("cli: sweep without a device names the measuring options it ignores") {
  // Issue 12: --ceiling FILE, --ceiling measured and --devices 5 were ignored in silence.
  const CliResult r = run_cli(
      "sweep --gpu h200 --seq-lens 1024 --ceiling measured --devices 5 --hot --max-noise 0.5 "
      "--json -");
  REQUIRE(r.exit_code == 0);
  const std::string note =
      "ignored, nothing is measured: --devices 5, --ceiling measured, --hot, --max-noise 0.5";
  CHECK(r.err.find("NOTE: " + note) != std::string::npos);
  const json doc = json::parse(r.out);
  const json& reasons = doc["provenance"]["reasons"];
  CHECK(std::find(reasons.begin(), reasons.end(), note) != reasons.end());
  // Nothing given, nothing said.
  const CliResult plain = run_cli("sweep --gpu h200 --seq-lens 1024");
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.err.find("NOTE:") == std::string::npos);
}
