// audit over the figure table: every model, measured, derived and ceiling
// figure that a report stores is recomputed, so an edit to any one of them is
// caught; and a row whose kernel the catalog does not know (a peer's, a
// plugin's) is re-derived from what the row records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/evidence/audit.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/own_byte_count.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;
using nlohmann::json;

namespace {

json* at_path(json& row, std::string_view path) {
  json* node = &row;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!node->is_object() || !node->contains(key) || (*node)[key].is_null()) return nullptr;
    node = &(*node)[key];
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

// Another value of the same kind: a number moved by half, a word swapped
// for another word the reader accepts.
json tampered(const Figure& f, const json& value) {
  if (f.word()) {
    if (f.tag == "model/regime") {
      return value == "memory-bound" ? "compute-bound" : "memory-bound";
    }
    if (f.tag == "ceiling/memory_roof") return value == "dram" ? "dram_read" : "dram";
    if (f.tag == "model/interval_regime")
      return value == "uncertain" ? "memory-bound" : "uncertain";
    return value == "compulsory" ? "kv_reload" : "compulsory";  // model/dram_model
  }
  const double x = value.get<double>();
  return x == 0 ? 1.0 : x * 1.5;
}

std::size_t count_of(const AuditResult& result, FindingKind kind) {
  return static_cast<std::size_t>(
      std::count_if(result.findings.begin(), result.findings.end(),
                    [kind](const Finding& f) { return f.kind == kind; }));
}

std::vector<std::string> claim_messages(const AuditResult& result) {
  std::vector<std::string> out;
  for (const Finding& f : result.findings) {
    if (f.kind == FindingKind::claim) out.push_back(f.message);
  }
  return out;
}

bool caught(const AuditResult& result, std::size_t row, const Figure& f) {
  const std::string where = fmt::format("results[{}] ", row);
  const std::string field = fmt::format("{}: report", f.json);
  for (const Finding& finding : result.findings) {
    if (finding.kind == FindingKind::mismatch && finding.where.starts_with(where) &&
        finding.message.starts_with(field)) {
      return true;
    }
  }
  return false;
}

// A torch SDPA row as the peers script writes it: a kernel the catalog does
// not know, the compulsory traffic model, no tile, fp16 tensor cores.
ResultRow peer_row(const CeilingRecord& ceiling) {
  ResultRow row;
  row.kernel = "torch_sdpa_flash";
  row.direction = Direction::forward;
  row.problem = {1, 8, 4096, 64, true, DType::fp16};
  row.compute_unit = ComputeUnit::fp16_tensor;
  const KernelRecord record{
      Direction::forward, TrafficModelKind::compulsory, {}, ComputeUnit::fp16_tensor};
  row.model = model_figures(record, row.problem, ceiling, FlopConvention::exact);
  row.device = 0;
  row.timing = Timing{};
  row.timing->samples_ms = {0.051, 0.052, 0.050, 0.051};
  row.timing->summary = summarize(row.timing->samples_ms);
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, ceiling);
  row.correctness = Correctness{"torch.nn.functional.scaled_dot_product_attention(math)",
                                1e-3,
                                2e-3,
                                5e-3,
                                true,
                                {},
                                std::nullopt};
  return row;
}

// A plugin kernel's own byte count that answers 3e7 B for every shape.
class FixedCount final : public OwnByteCount {
 public:
  ByteCount hbm_bytes(const AttentionProblem&) const override { return 3e7; }
};
const FixedCount own_count;
const std::string own_count_sha256(64, 'a');

// every_kernel_report plus a row of a plugin kernel that counts its own
// bytes (traffic `plugin`, 3e7 B) on fa1_scalar's shape and tile, named in
// provenance.plugins.
Report with_own_count_row(Report report) {
  ResultRow row = report.results[1];  // fa1_scalar
  row.kernel = "own_count";
  row.profile.reset();
  const KernelRecord record{
      row.direction, TrafficModelKind::plugin, row.tile, row.compute_unit, nullptr, 3e7};
  row.model = model_figures(record, row.problem, report.ceiling, FlopConvention::exact);
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, report.ceiling);
  report.results.push_back(row);
  report.provenance.plugins.push_back({"own_count", "1.0", "libown.so", own_count_sha256});
  return report;
}

// What `audit --plugin libown.so` gives audit for that row's kernel.
const std::vector<PluginByteSource> own_count_source{{"own_count", own_count_sha256, &own_count}};

}  // namespace

// With the plugin's count (audit --plugin) a plugin row's traffic.bytes is
// recomputed like every other figure.
TEST_CASE("audit catches an edit to every stored model, measured, derived and ceiling figure") {
  const Report clean = with_own_count_row(every_kernel_report());
  REQUIRE(audit_report(clean, {}, own_count_source).consistent());
  const json document = to_json(clean);
  for (const Figure& f : row_figures()) {
    if (f.view() || f.source == FigureSource::historical) continue;
    INFO(f.tag);
    std::size_t edits = 0;
    for (std::size_t i = 0; i < clean.results.size(); ++i) {
      json edited = document;
      json* value = at_path(edited["results"][i], f.json);
      if (value == nullptr) continue;  // not in this row (a model that does not apply)
      *value = tampered(f, *value);
      const AuditResult result = audit_report(report_from_json(edited), {}, own_count_source);
      CHECK(caught(result, i, f));
      ++edits;
    }
    CHECK(edits > 0);  // every figure was edited in some row
  }
}

TEST_CASE("audit catches an edit to a historical row's printed figures") {
  const Report clean = seed_report("H100");
  const std::vector<std::string> claims = claim_messages(audit_report(clean));
  const json document = to_json(clean);
  for (const Figure& f : row_figures()) {
    if (f.source != FigureSource::historical) continue;
    INFO(f.tag);
    json edited = document;
    json* value = at_path(edited["results"][0], f.json);
    REQUIRE(value != nullptr);
    *value = f.word() ? json("compute-bound") : json(value->get<double>() * 4);
    // A new claim finding, or one that now quotes the edited value.
    CHECK(claim_messages(audit_report(report_from_json(edited))) != claims);
  }
}

TEST_CASE("a peer row outside the catalog is re-derived from what it records") {
  Report report = measured_report();
  report.results.push_back(peer_row(report.ceiling));
  const AuditResult clean = audit_report(report);
  INFO(render_audit(clean, "peers.json"));
  CHECK(clean.consistent());
  // The row survives the file, and its bytes are the compulsory model's: Q, K, V, O once,
  // 4 x 8 heads x 4096 x 64 x 2 B = 16,777,216 B.
  const Report back = report_from_json(json::parse(to_json(report).dump()));
  CHECK(back.results.back().model->traffic.bytes == 16777216.0);
  CHECK(audit_report(back).consistent());

  Report edited = report;
  edited.results.back().model->traffic.bytes *= 0.5;  // half the bytes: twice the AI
  CHECK(caught(audit_report(edited), report.results.size() - 1, figure("model/bytes")));

  Report tiled = report;  // kv_reload needs a tile the peer row does not record
  tiled.results.back().model->traffic.model = TrafficModelKind::kv_reload;
  CHECK(count_of(audit_report(tiled), FindingKind::unverifiable) == 1);
}

// Without the plugin, a plugin row's traffic.bytes is an input (named by the
// plugin's SHA-256): every figure derived from it is still recomputed, so an
// edit of it alone shows in them; a note says the count was not counted again.
TEST_CASE("without its plugin, a plugin row's byte count is an input, noted as such") {
  const Report clean = with_own_count_row(every_kernel_report());
  const std::size_t row = clean.results.size() - 1;
  const AuditResult alone = audit_report(clean);
  CHECK(alone.consistent());
  CHECK(std::any_of(alone.findings.begin(), alone.findings.end(), [](const Finding& f) {
    return f.kind == FindingKind::note &&
           f.message.starts_with(
               "own_count: traffic.bytes of 1 row(s) is the kernel's own count "
               "(hbm_bytes of plugin libown.so, sha256 aaaa");
  }));

  Report edited = clean;
  edited.results[row].model->traffic.bytes *= 0.5;
  const AuditResult result = audit_report(edited);
  CHECK(caught(result, row, figure("model/ai")));
  CHECK(caught(result, row, figure("model/bytes/plugin")));
  // With the plugin the edit is caught where it was made.
  CHECK(caught(audit_report(edited, {}, own_count_source), row, figure("model/bytes")));

  // Another plugin file than the one provenance names: not asked.
  const std::vector<PluginByteSource> other{{"own_count", std::string(64, 'b'), &own_count}};
  CHECK(audit_report(edited, {}, other).consistent() == audit_report(edited).consistent());
  CHECK_FALSE(caught(audit_report(edited, {}, other), row, figure("model/bytes")));

  Report orphan = clean;
  orphan.provenance.plugins.clear();
  CHECK(count_of(audit_report(orphan), FindingKind::mismatch) == 1);
}

TEST_CASE("audit re-derives a profiled row from its counters: a tampered counter is caught") {
  const Report clean = every_kernel_report();
  const auto profiled = static_cast<std::size_t>(
      std::distance(clean.results.begin(),
                    std::find_if(clean.results.begin(), clean.results.end(),
                                 [](const ResultRow& r) { return r.profile.has_value(); })));
  REQUIRE(profiled < clean.results.size());
  const json document = to_json(clean);
  REQUIRE(audit_report(report_from_json(document)).consistent());

  json edited = document;
  for (json& counter : edited["results"][profiled]["profile"]["counters"]) {
    if (counter["metric"] == "dram__bytes_read.sum") counter["value"] = 12e6;  // was 6e6
  }
  const AuditResult result = audit_report(report_from_json(edited));
  CHECK(caught(result, profiled, figure("profile/dram_bytes")));
  CHECK(caught(result, profiled, figure("profile/dram_model_error")));

  // A derived key deleted is missing, not optional: every profile has its keys.
  json deleted = document;
  deleted["results"][profiled]["profile"]["checks"].erase("timing_ratio");
  CHECK_FALSE(audit_report(report_from_json(deleted)).consistent());
}

TEST_CASE("a row whose profile is unavailable audits like one without --profile") {
  Report report = every_kernel_report();
  for (ResultRow& row : report.results) {
    row.profile = Profile{"Nsight Compute",
                          "",
                          "",
                          "ncu not found: 'ncu' is not an executable on "
                          "PATH (--ncu PATH names it)",
                          {},
                          {},
                          {}};
  }
  const json document = to_json(report);
  const Report back = report_from_json(document);
  CHECK(back.results.front().profile->unavailable.starts_with("ncu not found"));
  CHECK(audit_report(back).consistent());
  CHECK(back.provenance.auditable == report.provenance.auditable);
}

TEST_CASE("the L2-aware model's GPU figures must be the row's device's") {
  Report report = every_kernel_report();
  REQUIRE(report.results.front().model->l2_inputs);
  report.results.front().model->l2_inputs->l2_bytes = 50331648;  // 48 MiB: an H100's
  // The row's figures follow the edited L2 (a consistent forgery), yet the device says 60 MiB.
  report.results.front().model =
      model_figures(kernel_record(report.results.front()), report.results.front().problem,
                    report.ceiling, FlopConvention::exact, report.results.front().model->l2_inputs);
  const AuditResult result = audit_report(report);
  CHECK(std::any_of(result.findings.begin(), result.findings.end(), [](const Finding& f) {
    return f.kind == FindingKind::mismatch && f.message.starts_with("traffic.l2_model:");
  }));
}

TEST_CASE("a row's loop kept whole is audited through the interval it bounds") {
  // fa1_wmma causal at H 4, N 131072, d 64 on the H200 model: a head's K/V
  // (32 MiB) just past the 30 MiB partition, where a 24 MiB loop raises the
  // high bound (tests/roofline/model/test_l2_interval.cpp).
  Report report = model_report();
  report.results.resize(1);
  L2ModelInputs kept{62914560, 2, 132, {9, 0}, "GPU table h200"};
  kept.loop_kept_bytes = 24.0 * 1024 * 1024;
  kept.loop_kept_source = "GPU table h200: a test's figure";
  report.results[0] =
      model_row(*find_kernel("fa1_wmma"), {1, 4, 131072, 64, true, DType::fp16}, report.ceiling,
                FlopConvention::exact, ComputeCapability{9, 0}, kept);
  json document = to_json(report);
  CHECK(document["results"][0]["traffic"]["l2_model"]["loop_kept_bytes"] == 25165824.0);
  CHECK(audit_report(report_from_json(document)).consistent());

  // The figure edited alone: the recorded high bound no longer follows from it.
  document["results"][0]["traffic"]["l2_model"]["loop_kept_bytes"] = 31457280.0;
  const AuditResult edited = audit_report(report_from_json(document));
  CHECK(std::any_of(edited.findings.begin(), edited.findings.end(), [](const Finding& f) {
    return f.kind == FindingKind::mismatch && f.message.starts_with("traffic.l2_interval.high:");
  }));
}
