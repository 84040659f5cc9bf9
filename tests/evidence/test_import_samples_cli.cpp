// `cuflash-roofline import-samples` run as the peer script runs it: --plan
// lists the problems of the axis flags and checks the ceiling options;
// RAW becomes a report that `audit` finds consistent.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "sample_reports.hpp"

using nlohmann::json;

namespace {

std::string write_raw(const std::string& name, const json& document) {
  const std::string path = temp_path(name);
  std::ofstream(path) << document.dump(2);
  return path;
}

// The one-line message of a refused command, without the tool's prefix.
std::string refusal(const std::vector<std::string>& arguments) {
  const CliResult r = run_cli(arguments);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const std::string prefix = "cuflash-roofline: error: ";
  REQUIRE(r.err.starts_with(prefix));
  return r.err.substr(prefix.size(), r.err.size() - prefix.size() - 1);
}

}  // namespace

TEST_CASE("import-samples --plan: the problems of the axes in the sweep's order, as JSON") {
  const CliResult r = run_cli({"import-samples", "--plan", "--seq-lens", "256,1000", "--head-dims",
                               "64,100000", "--both", "--dtype", "fp16,bf16"});
  REQUIRE(r.exit_code == 0);
  const json problems = json::parse(r.out)["problems"];
  REQUIRE(problems.size() == 16);  // 2 masks x 2 dtypes x 2 head dims x 2 lengths
  // mask, dtype, head dim, batch, heads, length from the outside in (app/sweep_options.cpp)
  CHECK(problems[0] == raw_problem("fp16", 256));
  CHECK(problems[1] == raw_problem("fp16", 1000));
  CHECK(problems[2]["head_dim"] == 100000);  // no kernel of ours has it; a peer's may
  CHECK(problems[4]["dtype"] == "bf16");
  CHECK(problems[8]["causal"] == true);
}

TEST_CASE("import-samples --plan: a bad axis is refused in the sweep's words") {
  for (const char* value : {"1024:512:x2", "0", "1,,2", "8,8"}) {
    INFO(value);
    const CliResult model = run_cli({"model", "--seq-lens", value});
    CHECK(refusal({"import-samples", "--plan", "--seq-lens", value}) + "\n" ==
          model.err.substr(std::string("cuflash-roofline: error: ").size()));
  }
  CHECK(refusal({"import-samples", "--plan", "--head-dims", "2000000"}) ==
        "--head-dims: 2000000 is larger than 1048576");
}

TEST_CASE("import-samples --plan: the options the import will take are checked first") {
  CHECK(refusal({"import-samples", "--plan", "--gpu", "zz"}).starts_with("--gpu zz: unknown GPU"));
  CHECK(refusal({"import-samples", "--plan", "--ceiling", "measured"})
            .starts_with("--ceiling measured: import-samples measures nothing"));
  const std::string missing = temp_path("no-such-ceilings.json");
  CHECK(refusal({"import-samples", "--plan", "--ceiling", missing})
            .starts_with("--ceiling " + missing + ": " + missing + ": cannot open"));
  CHECK(refusal({"import-samples", "--plan", "--flop-convention", "most"}) ==
        "--flop-convention: unknown convention 'most' (exact or half)");
  CHECK(refusal({"import-samples", "--seq-lens", "256"}) == "--seq-lens requires --plan");
  CHECK(refusal({"import-samples", "--plan", "--json", "x.json"}) == "--plan excludes --json");
  CHECK(refusal({"import-samples"}) == "import-samples: give the raw samples FILE, or --plan");
}

TEST_CASE("import-samples RAW: the report of the samples, consistent under audit") {
  const std::string raw = write_raw("peer-raw.json", peer_raw_samples());
  const std::string report = temp_path("peer-report.json");
  const CliResult r = run_cli({"import-samples", raw, "--gpu", "h200", "--json", report});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("torch_sdpa_math") != std::string::npos);  // the table
  const json written = json::parse(read_file(report));
  CHECK(written["provenance"]["auditable"] == true);
  CHECK(written["provenance"]["environment"]["python"] == "3.12.3");
  CHECK(written["tool"]["name"] == "cuflash-roofline/peers/torch_sdpa");
  CHECK_FALSE(written["tool"].contains("build_type"));  // the script has no build
  CHECK(written["results"][0]["timing"]["median_ms"] == 0.021);
  const CliResult audit = run_cli({"audit", report});
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find("consistent: 3 rows") != std::string::npos);

  // --json -: the report on stdout, the table on stderr
  const CliResult piped = run_cli({"import-samples", raw, "--gpu", "h200", "--json", "-"});
  CHECK(piped.exit_code == 0);
  CHECK(json::parse(piped.out)["results"].size() == 3);
  CHECK(piped.err.find("torch_sdpa_flash") != std::string::npos);
  std::remove(report.c_str());
  std::remove(raw.c_str());
}

TEST_CASE("import-samples RAW: a failed row exits 1; another GPU's ceiling is said and recorded") {
  json document = peer_raw_samples();
  document["results"][1]["check"]["tensors"][0]["rel_l2_err"] = 0.5;
  const std::string raw = write_raw("peer-raw-failed.json", document);
  const CliResult failed = run_cli({"import-samples", raw, "--gpu", "h200", "--json", "-"});
  CHECK(failed.exit_code == 1);
  CHECK(json::parse(failed.out)["results"][1]["status"] == "failed");

  const CliResult a100 = run_cli({"import-samples", raw, "--gpu", "a100", "--json", "-"});
  CHECK(a100.err.find("WARNING: ceiling 'a100'") != std::string::npos);
  const json provenance = json::parse(a100.out)["provenance"];
  CHECK(provenance["auditable"] == false);
  CHECK(provenance["reasons"].dump().find("the ceiling is a100's, not the measuring device's") !=
        std::string::npos);
  std::remove(raw.c_str());
}

TEST_CASE("import-samples RAW: an unusable file is refused naming it and the key") {
  json document = peer_raw_samples();
  document["results"][0]["kernel"] = "torch_sdpa_cudnn";
  const std::string raw = write_raw("peer-raw-bad.json", document);
  CHECK(refusal({"import-samples", raw}) ==
        raw + ": results[0].kernel: 'torch_sdpa_cudnn' is not one of backends");
  CHECK(refusal({"import-samples", raw, "--json", raw}).find("--json") != std::string::npos);
  CHECK(refusal({"import-samples", "--plan", raw}) ==
        "--plan lists problems and reads no samples: drop " + raw);
  std::remove(raw.c_str());
}

TEST_CASE("import-samples RAW: a backward row reaches the report backward and audits clean") {
  const std::string raw = write_raw("peer-raw-backward.json", peer_backward_raw_samples());
  const std::string report = temp_path("peer-report-backward.json");
  const CliResult r = run_cli({"import-samples", raw, "--gpu", "h200", "--json", report});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json written = json::parse(read_file(report));
  CHECK(written["results"][0]["direction"] == "forward");
  CHECK(written["results"][1]["direction"] == "backward");
  CHECK(written["results"][1]["traffic"]["bytes"] == 8421376.0);  // test_raw_samples.cpp
  CHECK(written["results"][2]["status"] == "ok");                 // GQA
  CHECK(written["results"][2]["traffic"]["bytes"] == 5275648.0);
  CHECK(written["results"][3]["status"] == "skipped");  // Nk != Nq
  const CliResult audit = run_cli({"audit", report});
  INFO(audit.out);
  CHECK(audit.exit_code == 0);
  CHECK(audit.out.find("consistent: 4 rows") != std::string::npos);
  // the backward row pairs with a backward row only: here, itself
  const CliResult compare = run_cli({"compare", report, report});
  CHECK(compare.exit_code == 0);
  CHECK(compare.out.find("backward") != std::string::npos);
  std::remove(report.c_str());
  std::remove(raw.c_str());
}
