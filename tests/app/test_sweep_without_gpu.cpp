#include <catch2/catch.hpp>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

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
  // The seed's default axes: B = 1, H = 8, d = 64, N 1024…16384 (5 lengths), 4 forward kernels.
  REQUIRE(doc["results"].size() == 20);
  for (const json& row : doc["results"]) {
    CHECK(row["causal"] == true);
    CHECK(row["batch"] == 1);
    CHECK(row["heads"] == 8);
    CHECK(row["head_dim"] == 64);
    CHECK_FALSE(row.contains("timing"));
  }
  std::remove(out.c_str());
}

TEST_CASE("cli: sweep --require-gpu fails without a device; --gpu auto cannot guess") {
  const CliResult required = run_cli("sweep --gpu a100 --require-gpu");
  CHECK(required.exit_code != 0);
  CHECK(required.err == "cuflash-roofline: error: --require-gpu: no CUDA device on this machine\n");
  const CliResult automatic = run_cli("sweep");
  CHECK(automatic.exit_code != 0);
  CHECK(automatic.err.find("--gpu auto: no CUDA device here to match") != std::string::npos);
}
