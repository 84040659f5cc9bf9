// A peer's raw samples (roofline/evidence/raw_samples.hpp) read strictly and
// turned into a report by the sweep's own functions: the figures below are
// derived by hand from the H200 datasheet roof (sample_reports.hpp) and the
// model's formulas (docs/model.md), the verdicts from output_check.hpp.
#include <catch2/catch.hpp>

#include <functional>

#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/raw_samples.hpp"
#include "roofline/report/report_json.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;
using nlohmann::json;

namespace {

Report import(const json& document, const CeilingRecord& ceiling = h200_datasheet(),
              const std::vector<std::string>& ceiling_reasons = {}) {
  return samples_report(raw_samples_from_json(document), ceiling, FlopConvention::exact,
                        ceiling_reasons);
}

std::string refusal(const std::function<void(json&)>& edit) {
  json document = peer_raw_samples();
  edit(document);
  try {
    import(document);
  } catch (const InputError& error) {
    return error.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("raw samples: a peer row's figures are the model's, its time the sweep's summary") {
  const Report report = import(peer_raw_samples());
  REQUIRE(report.results.size() == 3);
  const ResultRow& flash = report.results[0];
  CHECK(flash.status == RowStatus::ok);
  CHECK(flash.kernel == "torch_sdpa_flash");
  CHECK(flash.device == 0);
  CHECK_FALSE(flash.tile.tiled());
  CHECK(flash.compute_unit == ComputeUnit::fp16_tensor);
  // 4 B H N^2 d = 4 x 8 x 1024^2 x 64; Q, K, V, O once: 4 x 8 x 1024 x 64 x 2 bytes
  CHECK(flash.model->flops.exact == 2147483648.0);
  CHECK(flash.model->traffic.model == TrafficModelKind::compulsory);
  CHECK(flash.model->traffic.bytes == 4194304.0);
  CHECK(flash.model->ai == 512.0);
  CHECK(flash.model->roofline->roof_TFLOPs == 989.4);  // 512 FLOP/B is right of the 206 ridge
  CHECK(flash.timing->summary.median == 0.021);
  CHECK(flash.timing->throttle_threshold_percent == 75.0);
  CHECK(flash.achieved->TFLOPs == Approx(2147483648.0 / 0.021e-3 / 1e12));
  CHECK(flash.correctness->passed);
  CHECK(flash.correctness->tolerance == 5e-3);

  const ResultRow& math = report.results[1];
  CHECK(math.compute_unit == ComputeUnit::fp32_simt);  // fp16 computed in fp32
  CHECK(math.model->roofline->roof_TFLOPs == 67.0);

  const ResultRow& refused = report.results[2];
  CHECK(refused.status == RowStatus::skipped);
  CHECK(refused.reason == "torch refused: no kernel");
  CHECK(refused.compute_unit == ComputeUnit::bf16_tensor);
  CHECK_FALSE(refused.timing);

  CHECK(report.provenance.source == ProvenanceSource::measured);
  CHECK(report.provenance.auditable);
  CHECK(report.provenance.reasons.empty());
  CHECK(report.provenance.environment.at("torch") == "2.11.0+cu130");
  CHECK(report.tool.name == "cuflash-roofline/peers/torch_sdpa");
  CHECK(report.provenance.command == "peers/torch_sdpa.py --json x.json");
  const AuditResult audit = audit_report(report);
  CHECK(audit.consistent());
}

TEST_CASE("raw samples: a failed check fails the row, untimed") {
  json document = peer_raw_samples();
  document["results"][0]["check"]["tensors"][0]["rel_l2_err"] = 0.5;
  const ResultRow row = import(document).results[0];
  CHECK(row.status == RowStatus::failed);
  CHECK(row.reason ==
        "correctness: worst rel L2 error 0.5, max abs error 0.001 (rel L2 tolerance 0.005)");
  CHECK_FALSE(row.correctness->passed);
  CHECK_FALSE(row.timing);
  CHECK_FALSE(row.achieved);

  document = peer_raw_samples();
  document["results"][0]["check"]["tensors"][0]["all_finite"] = false;
  CHECK(import(document).results[0].reason == "correctness: NaN or Inf in O");
}

TEST_CASE("raw samples: the model's skip wins over the measurement; no samples fail the row") {
  CeilingRecord no_simt = h200_datasheet();
  no_simt.peak_TFLOPs[static_cast<std::size_t>(ComputeUnit::fp32_simt)].reset();
  const ResultRow math = import(peer_raw_samples(), no_simt).results[1];
  CHECK(math.status == RowStatus::skipped);
  CHECK(math.reason == "ceiling h200 has no fp32_simt peak");
  CHECK_FALSE(math.timing);
  CHECK_FALSE(math.correctness);

  json document = peer_raw_samples();
  document["results"][0].erase("timing");
  const ResultRow untimed = import(document).results[0];
  CHECK(untimed.status == RowStatus::failed);
  CHECK(untimed.reason == "no samples: the events around the launches measured nothing");
}

TEST_CASE("raw samples: auditable only for a finished run by a clean tree, reasons in order") {
  json document = peer_raw_samples();
  document["provenance"]["finished"] = false;
  document["provenance"]["reasons"] = {"interrupted (Ctrl-C): not every configuration ran"};
  document["tool"]["git_dirty"] = true;
  const Report report = import(document, h200_datasheet(), {"ceiling 'a100' is another GPU's"});
  CHECK_FALSE(report.provenance.auditable);
  CHECK(report.provenance.reasons ==
        std::vector<std::string>{
            "interrupted (Ctrl-C): not every configuration ran",
            "the measurement did not finish: not every configuration ran",
            "ceiling 'a100' is another GPU's",
            "built from a dirty tree (commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 plus "
            "uncommitted changes)"});
  CHECK(audit_report(report).consistent());
}

TEST_CASE("raw samples: what the reader refuses, naming the key") {
  CHECK(refusal([](json& d) { d["schema"] = "cuflash-roofline/report/v1"; }) ==
        "schema: expected 'cuflash-roofline/raw-samples/v1', found 'cuflash-roofline/report/v1'");
  CHECK(refusal([](json& d) { d["backends"][0]["kernel"] = "fa2_mma"; }) ==
        "backends[0].kernel: 'fa2_mma' is a built-in kernel's name; a peer's kernel needs its own "
        "(torch_sdpa_flash)");
  CHECK(refusal([](json& d) { d["backends"][1]["kernel"] = "torch_sdpa_flash"; }) ==
        "backends[1].kernel: 'torch_sdpa_flash' appears twice");
  CHECK(refusal([](json& d) { d["backends"][0]["arithmetic"] = "fp8"; }) ==
        "backends[0].arithmetic: unknown arithmetic 'fp8'");
  CHECK(refusal([](json& d) { d["backends"] = json::array(); }) ==
        "(top level): backends: the document names no kernel");
  CHECK(refusal([](json& d) { d["results"][1]["kernel"] = "torch_sdpa_cudnn"; }) ==
        "results[1].kernel: 'torch_sdpa_cudnn' is not one of backends");
  CHECK(refusal([](json& d) { d["results"][0]["device"] = 1; }) ==
        "results[0].device: 1 is not one of devices");
  CHECK(refusal([](json& d) { d["results"][0].erase("check"); }) == "results[0].check: missing");
  CHECK(refusal([](json& d) { d["results"][2]["timing"] = raw_timing({1.0}); }) ==
        "results[2].timing: present, but the row is skipped");
  CHECK(refusal([](json& d) { d["results"][2]["reason"] = ""; }) ==
        "results[2]: a skipped row needs a reason");
  CHECK(refusal([](json& d) { d["results"][0]["check"]["tensors"] = json::array(); }) ==
        "results[0].check: tensors: no output tensor was checked");
  CHECK(refusal([](json& d) { d["results"][0]["check"]["tensors"][0]["ref_max_abs"] = -1; }) ==
        "results[0].check.tensors[0].ref_max_abs: must not be negative, found -1");
  CHECK(refusal([](json& d) { d["results"][0]["problem"]["dtype"] = "fp8"; }) ==
        "results[0].problem.dtype: unknown dtype 'fp8'");
  CHECK(refusal([](json& d) { d["provenance"]["environment"] = json::object(); }) ==
        "provenance.environment: names no software (python, torch, ...)");
  CHECK(refusal([](json& d) { d["provenance"]["environment"]["torch"] = ""; }) ==
        "provenance.environment: torch: empty");
  CHECK(refusal([](json& d) { d["devices"].push_back(d["devices"][0]); }) ==
        "devices[1]: device 0 appears twice");
  // What the report could not hold: a configuration twice, a sample that is no time.
  CHECK(refusal([](json& d) {
          d["results"][1]["kernel"] = "torch_sdpa_flash";
        }).starts_with("results[1]: repeats results[0]"));
  CHECK(refusal([](json& d) { d["results"][0]["timing"]["samples_ms"][1] = -1.0; }) ==
        "results[0].timing.min_ms: must not be negative, found -1");
}

TEST_CASE("raw samples: the writer writes what the reader reads") {
  const RawSamples raw = raw_samples_from_json(peer_raw_samples());
  const json written = to_json(raw);
  CHECK(to_json(raw_samples_from_json(written)) == written);
  CHECK(written["results"][0]["problem"] == raw_problem("fp16", 1024));
  CHECK(written["backends"][1]["arithmetic"] == "fp32_simt");
  CHECK(written["results"][0]["check"] == raw_passing_check());
}

TEST_CASE("raw samples: a peer's kernel takes whatever shape its framework ran") {
  // GQA, 8 query heads over 2 K/V heads: K and V are counted per K/V head
  // (docs/model.md): Q and O 8 x 1024 x 64 x 2 B each, K and V 2 x 1024 x 64 x 2 B.
  json document = peer_raw_samples();
  document["results"][0]["problem"]["kv_heads"] = 2;
  const ResultRow row = import(document).results[0];
  CHECK(row.status == RowStatus::ok);
  CHECK(row.problem.key_heads() == 2);
  CHECK(row.model->traffic.bytes == 2 * 1048576.0 + 2 * 262144.0);
  CHECK(row.model->flops.exact == 2147483648.0);
  CHECK(to_json(raw_samples_from_json(document))["results"][0]["problem"]["kv_heads"] == 2);
}

TEST_CASE("raw samples: a backward row is counted as the sweep counts a backward kernel's") {
  const Report report = import(peer_backward_raw_samples());
  REQUIRE(report.results.size() == 4);
  CHECK(report.results[0].direction == Direction::forward);  // no key: the forward
  const ResultRow& backward = report.results[1];
  CHECK(backward.status == RowStatus::ok);
  CHECK(backward.direction == Direction::backward);
  // 2.5 x 4 B H N^2 d (flop_model.cpp); Q, K, V, O, dO, dQ, dK, dV of 8 x 1024 x 64 x 2 B
  // and the LSE, 8 x 1024 x 4 B (traffic_model.cpp's backward compulsory bytes)
  CHECK(backward.model->flops.exact == 2.5 * 2147483648.0);
  CHECK(backward.model->traffic.model == TrafficModelKind::compulsory);
  CHECK(backward.model->traffic.bytes == 8 * 1048576.0 + 32768.0);
  CHECK(backward.model->ai == Approx(5368709120.0 / 8421376.0));
  CHECK(backward.timing->summary.median == 0.061);
  CHECK(backward.achieved->TFLOPs == Approx(5368709120.0 / 0.061e-3 / 1e12));
  CHECK(backward.correctness->passed);
  CHECK(backward.correctness->tensors.size() == 3);
  CHECK(backward.correctness->tensors[2].tensor == "dV");
  // GQA: K, V, dK and dV of 2 K/V heads, 2 x 1024 x 64 x 2 B each
  const ResultRow& grouped = report.results[2];
  CHECK(grouped.status == RowStatus::ok);
  CHECK(grouped.model->traffic.bytes == 4 * 1048576.0 + 4 * 262144.0 + 32768.0);
  CHECK(grouped.model->flops.exact == 2.5 * 2147483648.0);
  const ResultRow& longer = report.results[3];
  CHECK(longer.status == RowStatus::skipped);
  CHECK(longer.reason ==
        "torch_sdpa_flash: the backward models describe as many keys as "
        "queries and a contiguous cache only");
  CHECK_FALSE(longer.timing);
  CHECK(report.provenance.auditable);
  CHECK(audit_report(report).consistent());
}

TEST_CASE("raw samples: the direction is written only for a backward row, and read back") {
  const json written = to_json(raw_samples_from_json(peer_backward_raw_samples()));
  CHECK_FALSE(written["results"][0].contains("direction"));
  CHECK(written["results"][1]["direction"] == "backward");
  CHECK(to_json(raw_samples_from_json(written)) == written);
  CHECK(refusal([](json& d) { d["results"][0]["direction"] = "sideways"; }) ==
        "results[0].direction: unknown direction 'sideways'");
}
