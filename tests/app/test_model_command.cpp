#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tests/builtin_kernels.hpp"
#include "tests/shipped_gpus.hpp"

using nlohmann::json;

TEST_CASE("cli: model --json - writes a model report, not auditable, with the reason") {
  const CliResult r = run_cli("model --gpu a100 --seq-lens 16384 --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  CHECK(doc["schema"] == "cuflash-roofline/report/v1");
  CHECK(doc["provenance"]["source"] == "model");
  CHECK(doc["provenance"]["auditable"] == false);
  CHECK(doc["provenance"]["reasons"][0] == "model projection, not a measurement");
  CHECK(doc["devices"].empty());
  CHECK(doc["ceiling"]["gpu"] == "a100");
  // One row per forward kernel of the catalog that takes the shape.
  const cfr::AttentionProblem problem{1, 8, 16384, 64, false, cfr::DType::fp16};
  REQUIRE(doc["results"].size() == cfr::test::kernels_planned(problem, false).size());
  const auto scalar_at =
      std::find_if(doc["results"].begin(), doc["results"].end(),
                   [](const json& row) { return row["kernel"] == "fa1_scalar"; });
  REQUIRE(scalar_at != doc["results"].end());
  const json& scalar = *scalar_at;
  CHECK(scalar["traffic"]["bytes"].get<double>() == 8624013312.0);  // the seed's ≈ 8.6 GB
  CHECK(scalar["flops"]["dense"].get<double>() == 549755813888.0);
  CHECK(r.err.find("kernel") != std::string::npos);  // the table went to stderr
}

// The V100's compute capability 7.0 from configs/gpus.json, fa1_wmma's
// minimum 8.0 from roofline/model/kernel_catalog.hpp.
TEST_CASE("cli: model --gpu skips a kernel the GPU table's compute capability cannot run") {
  const CliResult r =
      run_cli("model --gpu v100 --seq-lens 4096 --kernels fa1_scalar,fa1_wmma --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["results"].size() == 2);
  CHECK(doc["results"][0]["status"] == "ok");
  CHECK(doc["results"][1]["status"] == "skipped");
  CHECK(doc["results"][1]["reason"] ==
        "fa1_wmma needs compute capability 8.0 or newer; this GPU has 7.0");
  const json a100 =
      json::parse(run_cli("model --gpu a100 --seq-lens 4096 --kernels fa1_wmma --json -").out);
  CHECK(a100["results"][0]["status"] == "ok");  // 8.0
}

TEST_CASE("cli: model axes: ranges, --both, --backward, ragged N and N = 1") {
  const CliResult r = run_cli(
      "model --seq-lens 1,17,1000 --head-dims 32,128 --both --backward "
      "--dtype fp16,fp32 --json -");
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  // 2 masks · 2 dtypes · 2 head dims per N and kernel that takes it (--kernels all plans only
  // those: fa2_decode, built for 16 query tokens at most, at N = 1), forward and backward.
  // Skipped among them: a dtype or head dim the kernel lacks (fp32 of the tensor-core
  // kernels), or an architecture newer than the model's default ceiling, the A100's 8.0.
  std::size_t expected_rows = 0;
  int expected_skips = 0;
  for (const int n : {1, 17, 1000}) {
    const cfr::AttentionProblem problem{1, 8, n, 64, false, cfr::DType::fp16};
    for (const cfr::KernelDescription* kernel : cfr::test::kernels_planned(problem, true)) {
      expected_rows += 2 * 2 * 2;
      for (const cfr::DType dtype : {cfr::DType::fp16, cfr::DType::fp32}) {
        for (const int head_dim : {32, 128}) {
          if (!kernel->dtypes.contains(dtype) || !kernel->supports_head_dim(head_dim) ||
              !kernel->runs_on({8, 0})) {
            expected_skips += 2;
          }
        }
      }
    }
  }
  CHECK(doc["results"].size() == expected_rows);
  int skipped = 0;
  for (const json& row : doc["results"]) {
    if (row["status"] != "skipped") continue;
    ++skipped;
    const std::string kernel = row["kernel"];
    const cfr::KernelDescription* description = cfr::find_kernel(kernel);
    REQUIRE(description != nullptr);
    if (row["dtype"] == "fp32" && !description->dtypes.fp32) {
      CHECK(row["reason"] == kernel + " has no fp32 variant");
    } else if (!description->supports_head_dim(row["head_dim"].get<int>())) {
      CHECK(row["reason"] ==
            fmt::format("{} has no head_dim {} variant", kernel, row["head_dim"].get<int>()));
    }
  }
  CHECK(expected_skips > 0);  // the axes reach the refusals
  CHECK(skipped == expected_skips);
}

TEST_CASE("cli: csv and md outputs are written; the table lists every row") {
  const std::string csv = temp_path("out.csv");
  const std::string md = temp_path("out.md");
  const CliResult r = run_cli("model --seq-lens 1024:4096:x2 --csv " + csv + " --md " + md);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(csv).rfind("kernel,dir,dtype", 0) == 0);
  CHECK(read_file(md).find("| fa1_wmma") != std::string::npos);
  CHECK(r.out.find("model projection, not a measurement") != std::string::npos);
  std::remove(csv.c_str());
  std::remove(md.c_str());
}

TEST_CASE("cli: bad values fail with one line naming the value; nothing half-written") {
  const std::string out = temp_path("never.json");
  const std::string kernels_fa9 = "--kernels: unknown kernel 'fa9' (known: " +
                                  cfr::test::listed(cfr::test::builtin_kernel_names()) + ", all)";
  const std::string gpu_b200 =
      "--gpu b200: unknown GPU; known: " + cfr::test::listed(cfr::test::shipped_gpu_ids()) +
      ", auto";
  const std::pair<const char*, const char*> cases[] = {
      {"--seq-lens 0", "--seq-lens: 0 must be positive"},
      {"--seq-lens -3", "--seq-lens: -3 must be positive"},
      {"--seq-lens 1024:16384:2", "--seq-lens: malformed step '2' in '1024:16384:2'"},
      {"--head-dims 96", "--head-dims: 96 is not supported (supported: 32, 64, 128)"},
      {"--kernels fa9", kernels_fa9.c_str()},
      {"--dtype fp8", "--dtype: unknown dtype 'fp8' (fp16, bf16, fp32)"},
      {"--gpu b200", gpu_b200.c_str()},
      {"--batch x", "--batch: 'x' is not an integer (in 'x')"},
      {"--flop-convention quarter", "--flop-convention: unknown convention 'quarter'"},
  };
  for (const auto& [arguments, message] : cases) {
    INFO(arguments);
    const CliResult r = run_cli(std::string("model ") + arguments + " --json " + out);
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(file_exists(out));
  }
}
