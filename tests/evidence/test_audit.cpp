#include <catch2/catch.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

// The findings of one kind whose message starts with `field`.
std::vector<Finding> findings(const AuditResult& result, FindingKind kind,
                              std::string_view field = "") {
  std::vector<Finding> out;
  for (const Finding& f : result.findings) {
    if (f.kind == kind && f.message.starts_with(field)) out.push_back(f);
  }
  return out;
}

std::string all_messages(const AuditResult& result) {
  return render_audit(result, "r.json");
}

}  // namespace

TEST_CASE("a clean measured report audits consistent, every derived figure recomputed") {
  // sample_reports.cpp builds the report through model_row/summarize/achieved_figures.
  const AuditResult result = audit_report(measured_report());
  INFO(all_messages(result));
  CHECK(result.consistent());
  CHECK(result.failing() == 0);
  CHECK(result.rows == 9);
  // 8 ok rows x (4 flops + traffic.bytes and compulsory_bytes + 2 by_model (compulsory,
  // kv_reload) + dram_model and memory_roof + 5 breakdown + ai + 5 roofline + 7 timing + 4
  // achieved), plus the skipped row, which has no model figures.
  CHECK(result.figures_checked == 8 * (4 + 2 + 2 + 2 + 5 + 1 + 5 + 7 + 4));
}

TEST_CASE("the audit survives the JSON round trip: doubles are written exactly") {
  const Report back = report_from_json(nlohmann::json::parse(to_json(measured_report()).dump()));
  CHECK(audit_report(back).consistent());
}

TEST_CASE("an edited median is caught and named with the row and both values") {
  Report report = measured_report();
  const double true_median = report.results[0].timing->summary.median;
  report.results[0].timing->summary.median = true_median * 1.1;
  const AuditResult result = audit_report(report);
  CHECK_FALSE(result.consistent());
  const auto found = findings(result, FindingKind::mismatch, "timing.median_ms");
  REQUIRE(found.size() == 1);
  CHECK(found[0].where == "results[0] (fa1_scalar forward fp16 B=1 H=8 N=1024 d=64)");
  CHECK(found[0].message == fmt::format("timing.median_ms: report {:.10g}, recomputed {:.10g}",
                                        true_median * 1.1, true_median));
}

TEST_CASE("a removed sample is caught: the summary no longer follows from the samples") {
  Report report = measured_report();
  report.results[3].timing->samples_ms.pop_back();
  const AuditResult result = audit_report(report);
  CHECK_FALSE(result.consistent());
  CHECK(findings(result, FindingKind::mismatch, "timing.mean_ms").size() == 1);
  CHECK(findings(result, FindingKind::mismatch, "timing.median_ms").size() == 1);
  CHECK(
      findings(result, FindingKind::mismatch, "timing.mean_ms")[0].where.starts_with("results[3]"));
}

TEST_CASE("a flipped auditable flag is caught in both directions, naming the condition") {
  Report dirty = measured_report();
  dirty.tool.git_dirty = true;  // auditable still says true
  const auto dirty_findings = findings(audit_report(dirty), FindingKind::auditability);
  REQUIRE(dirty_findings.size() == 1);
  CHECK(dirty_findings[0].message ==
        "provenance.auditable is true, but built from a dirty tree (commit "
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904 plus uncommitted changes)");

  Report unchecked = measured_report();
  unchecked.results[2].correctness.reset();
  const auto unchecked_findings = findings(audit_report(unchecked), FindingKind::auditability);
  REQUIRE(unchecked_findings.size() == 1);
  CHECK(unchecked_findings[0].message.ends_with("was not checked against the reference"));

  Report model = model_report();
  model.provenance.auditable = true;
  const auto model_findings = findings(audit_report(model), FindingKind::auditability);
  REQUIRE(model_findings.size() == 1);
  CHECK(model_findings[0].message ==
        "provenance.auditable is true, but provenance source is 'model', not a measurement");

  Report understated = measured_report();
  understated.provenance.auditable = false;  // every condition holds, no reason given
  CHECK(findings(audit_report(understated), FindingKind::auditability).size() == 1);
}

TEST_CASE("a wrong FLOP count is caught against attention_flops") {
  Report report = measured_report();
  report.results[1].model->flops.exact *= 2;  // e.g. the dense count typed for a causal row
  const auto found = findings(audit_report(report), FindingKind::mismatch);
  REQUIRE(found.size() == 1);
  CHECK(found[0].where == "results[1] (fa1_scalar forward fp16 B=1 H=8 N=1024 d=64 causal)");
  CHECK(found[0].message.starts_with("flops.exact: report"));
}

TEST_CASE("edited bytes, tile and achieved figures are each caught") {
  Report bytes = measured_report();
  bytes.results[4].model->traffic.breakdown[1].bytes *= 1.01;  // K
  CHECK(findings(audit_report(bytes), FindingKind::mismatch, "traffic.breakdown.K").size() == 1);

  Report tile = measured_report();
  tile.results[4].tile = {32, 32};  // fa1_wmma uses 64x32 at d = 64
  const AuditResult tiled = audit_report(tile);
  CHECK(findings(tiled, FindingKind::mismatch,
                 "tile: report 32x32, the catalog's fa1_wmma uses "
                 "64x32 at d=64")
            .size() == 1);
  CHECK(findings(tiled, FindingKind::mismatch, "traffic.bytes").size() == 1);

  Report achieved = measured_report();
  achieved.results[5].achieved->TFLOPs *= 1.5;
  CHECK(findings(audit_report(achieved), FindingKind::mismatch, "achieved.TFLOPs").size() == 1);

  Report roof = measured_report();
  roof.results[6].model->roofline->roof_TFLOPs =
      989.4;  // the compute roof instead of bandwidth x AI
  CHECK(findings(audit_report(roof), FindingKind::mismatch, "roof_TFLOPs").size() == 1);
}

TEST_CASE("a correctness verdict that contradicts its own tolerance is caught") {
  Report report = measured_report();
  report.results[0].correctness->rel_l2_err = 0.2;  // tolerance 5e-3, still "passed"
  CHECK(findings(audit_report(report), FindingKind::mismatch, "correctness.passed").size() == 1);
}

// docs/checks.md: a sub-sampled check is stated in audit's output, never
// silent; a sample naming rows the problem lacks is a mismatch.
TEST_CASE("a sub-sampled check is a note naming its rows and seed; an impossible one a mismatch") {
  Report report = measured_report();
  ResultRow& row = report.results[0];
  REQUIRE(row.direction == Direction::forward);
  row.correctness->sample = CheckSample{0x1234, 256, 0};
  const AuditResult sampled = audit_report(report);
  INFO(all_messages(sampled));
  CHECK(sampled.consistent());
  const auto notes = findings(sampled, FindingKind::note, "correctness sub-sampled");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].message ==
        fmt::format("correctness sub-sampled: 256 of {} query rows a head, drawn with seed "
                    "0x0000000000001234 (sampled_rows, roofline/model/check_sample.hpp)",
                    row.problem.seq_len));

  row.correctness->sample = CheckSample{1, row.problem.seq_len + 1, 0};
  CHECK(findings(audit_report(report), FindingKind::mismatch, "correctness.sample").size() == 1);
  row.correctness->sample = CheckSample{1, 256, 256};  // key rows on a forward row
  CHECK(findings(audit_report(report), FindingKind::mismatch, "correctness.sample").size() == 1);

  ResultRow backward = row;
  backward.direction = Direction::backward;
  backward.correctness->sample = CheckSample{1, 256, 0};  // a backward row samples its keys too
  Report with_backward = measured_report();
  with_backward.results = {backward};
  CHECK(findings(audit_report(with_backward), FindingKind::mismatch, "correctness.sample").size() ==
        1);
}

TEST_CASE("failed rows are reported as notes, not inconsistencies") {
  Report report = measured_report();
  ResultRow& row = report.results[7];
  row.status = RowStatus::failed;
  row.reason = "cudaErrorIllegalAddress";
  row.timing.reset();
  row.achieved.reset();
  const AuditResult result = audit_report(report);
  INFO(all_messages(result));
  CHECK(result.consistent());
  const auto notes = findings(result, FindingKind::note, "status failed");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].message == "status failed: cudaErrorIllegalAddress");
}

TEST_CASE("a model report audits consistent; its own reasons come back as notes") {
  const AuditResult result = audit_report(model_report());
  CHECK(result.consistent());
  const auto notes = findings(result, FindingKind::note, "not auditable");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].message == "not auditable: a model projection: nothing was measured");
}

TEST_CASE("absurd shapes are unverifiable findings, not hangs or throws") {
  Report report = measured_report();
  report.results[0].problem.seq_len = std::int64_t{1}
                                      << 40;  // over a 64x64 tile: 2^34 blocks per head
  report.results[1].problem.head_dim = -3;
  report.results[2].tile = {0, 0};  // kv_reload needs a tile
  const AuditResult result = audit_report(report);
  CHECK(findings(result, FindingKind::unverifiable, "seq_len").size() == 1);
  CHECK(findings(result, FindingKind::unverifiable, "head_dim").size() == 1);
  CHECK(findings(result, FindingKind::unverifiable, "traffic: cannot recompute").size() == 1);
}

TEST_CASE("a row pointing at an unrecorded device is caught") {
  Report report = measured_report();
  report.results[0].device = 3;
  CHECK(findings(audit_report(report), FindingKind::mismatch, "device: 3 names no entry").size() ==
        1);
}

TEST_CASE("the audit renders one line per finding and a verdict line naming the file") {
  Report report = measured_report();
  report.results[0].timing->summary.max += 1;
  const std::string text = render_audit(audit_report(report), "sweep.json");
  CHECK(text.starts_with(
      "sweep.json: mismatch: results[0] (fa1_scalar forward fp16 B=1 H=8 N=1024 d=64): "
      "timing.max_ms: report"));
  CHECK(text.find("sweep.json: INCONSISTENT: 9 rows,") != std::string::npos);
  const nlohmann::json json = to_json(audit_report(report));
  CHECK(json["consistent"] == false);
  CHECK(json["findings"][0]["kind"] == "mismatch");
}

TEST_CASE("a report from before the memory roof audits as before: the absent key is not counted") {
  nlohmann::json document = to_json(measured_report());
  for (nlohmann::json& row : document["results"]) row.erase("memory_roof");
  document["ceiling"].erase("read_bandwidth_GBps");
  const AuditResult result = audit_report(report_from_json(document));
  CHECK(result.consistent());
  // The clean report's count less one memory_roof per ok row.
  CHECK(result.figures_checked == audit_report(measured_report()).figures_checked - 8);
}

TEST_CASE(
    "a decode row is audited on the read roof, and a memory roof the ceiling denies is "
    "caught") {
  // every_kernel_report: a 4600 GB/s read stream; its fa2_decode row is judged on it.
  const Report clean = every_kernel_report();
  const auto decode = std::find_if(clean.results.begin(), clean.results.end(),
                                   [](const ResultRow& r) { return r.kernel == "fa2_decode"; });
  REQUIRE(decode != clean.results.end());
  REQUIRE(decode->model->memory_roof == MemoryRoof::dram_read);
  const auto index = static_cast<std::size_t>(decode - clean.results.begin());
  INFO(all_messages(audit_report(clean)));
  CHECK(audit_report(clean).consistent());

  // Written by a tool that judged it on the copy's slope: the roof, the ridge and % BW follow.
  Report on_copy = clean;
  CeilingRecord copy_only = clean.ceiling;
  copy_only.read_bandwidth_GBps.reset();
  ResultRow& row = on_copy.results[index];
  row.model = model_row(fa2_decode_kernel, row.problem, copy_only, FlopConvention::exact,
                        ComputeCapability{9, 0}, row.model->l2_inputs)
                  .model;
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, copy_only);
  const AuditResult copied = audit_report(on_copy);
  CHECK(findings(copied, FindingKind::mismatch, "memory_roof: report dram, recomputed dram_read")
            .size() == 1);
  CHECK(findings(copied, FindingKind::mismatch, "ridge: report").size() == 1);
  CHECK(findings(copied, FindingKind::mismatch, "achieved.bandwidth_utilization").size() == 1);

  // A read roof the ceiling has no figure for.
  Report no_read = clean;
  no_read.ceiling.read_bandwidth_GBps.reset();
  CHECK(findings(audit_report(no_read), FindingKind::mismatch,
                 "memory_roof: report dram_read, recomputed dram")
            .size() == 1);
}

TEST_CASE("a row is audited as the kernel revision it ran: the one it records, or the oldest") {
  // fa3_wgmma's revisions 4 (Q blocks fastest) and 5 (heads side by side in groups that fit
  // the L2) give the H200 different L2 figures at B1 H8 N8192 d64.
  Report report = model_report();
  const AttentionProblem p{1, 8, 8192, 64, false, DType::fp16};
  const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};
  const auto row_of = [&](const KernelDescription& kernel) {
    return model_row(kernel, p, report.ceiling, FlopConvention::exact, ComputeCapability{9, 0},
                     h200);
  };
  const ResultRow v5 = row_of(fa3_wgmma_v5_kernel);
  const ResultRow v4 = row_of(fa3_wgmma_v4_kernel);
  REQUIRE(v5.kernel_revision == 5);
  REQUIRE(v4.kernel_revision == 4);
  REQUIRE(*v4.model->bytes_of(TrafficModelKind::l2_aware) !=
          *v5.model->bytes_of(TrafficModelKind::l2_aware));
  // (One row a report: the two are the same configuration.)
  for (const ResultRow& row : {v5, v4}) {
    report.results = {row};
    const AuditResult result =
        audit_report(report_from_json(nlohmann::json::parse(to_json(report).dump())));
    INFO(all_messages(result));
    CHECK(result.consistent());
  }
  // A row written before rows recorded their revision ran the oldest listed.
  report.results[0].kernel_revision.reset();
  CHECK(audit_report(report).consistent());
  // Revision 4's figures presented as revision 5's are caught ...
  report.results[0].kernel_revision = 5;
  const AuditResult as_v5 = audit_report(report);
  CHECK_FALSE(as_v5.consistent());
  CHECK(findings(as_v5, FindingKind::mismatch, "traffic.by_model.l2_aware").size() == 1);
  // ... and a revision the catalog does not list is named.
  report.results[0].kernel_revision = 3;
  const AuditResult unknown = audit_report(report);
  const auto named = findings(unknown, FindingKind::mismatch, "kernel_revision");
  REQUIRE(named.size() == 1);
  CHECK(named[0].message ==
        "kernel_revision: report 3, the catalog's fa3_wgmma lists revision 4, 5, 6, 7, 8");
}

// A model row the L2 simulation does not cover records no L2 inputs; its tile
// (fa3_wgmma's 192 rows at d 64, chosen by the GPU's SM count) is audited with
// the SMs another row of the report names.
TEST_CASE("a model report's rows without L2 inputs are audited with the report's SM count") {
  Report report = model_report();
  const L2ModelInputs h100{52428800, 2, 132, {9, 0}, "GPU table h100"};
  report.results.clear();
  for (DType dtype : {DType::fp16, DType::fp32}) {
    report.results.push_back(model_row(fa3_wgmma_kernel, {4, 16, 8192, 64, false, dtype},
                                       report.ceiling, FlopConvention::exact,
                                       ComputeCapability{9, 0}, h100));
  }
  REQUIRE(report.results[0].tile == TileShape{192, 128});
  REQUIRE(report.results[1].status == RowStatus::skipped);
  REQUIRE_FALSE(report.results[1].model.has_value());
  CHECK(report.results[1].tile == TileShape{192, 128});
  CHECK(audit_report(report).consistent());
}
