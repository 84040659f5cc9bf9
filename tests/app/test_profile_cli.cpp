// sweep --profile and its hidden child mode as a user meets them without a
// GPU (the GPU half is tests/gpu/device_run.sh step `profile`).
#include <catch2/catch.hpp>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

TEST_CASE("cli: sweep --profile without a CUDA device says nothing is profiled and goes on") {
  const std::string out = temp_path("profile-model.json");
  const CliResult r =
      run_cli("sweep --gpu h200 --profile --ncu /nonexistent/ncu --seq-lens 1024 --json " + out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("--profile: no CUDA device, nothing is profiled") != std::string::npos);
  const json doc = json::parse(read_file(out));
  for (const json& row : doc["results"]) CHECK_FALSE(row.contains("profile"));
  // The model's rows carry the L2-aware DRAM bytes of the GPU table's L2.
  CHECK(doc["results"][0]["traffic"]["dram_model"] == "l2_aware");
  CHECK(doc["results"][0]["traffic"]["l2_model"]["source"].get<std::string>().starts_with(
      "GPU table "));
  std::remove(out.c_str());
}

TEST_CASE("cli: profile-child is hidden from --help and names an unreadable rows file") {
  CHECK(run_cli("--help").out.find("profile-child") == std::string::npos);
  const CliResult r = run_cli("profile-child --rows " + temp_path("no-such-rows.txt"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--rows: cannot read") != std::string::npos);
}
