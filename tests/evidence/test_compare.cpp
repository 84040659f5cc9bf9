#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "roofline/evidence/compare.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

const RowComparison& row_for(const Comparison& c, std::int64_t seq_len, bool causal,
                             std::string_view kernel = "fa1_wmma") {
  for (const RowComparison& r : c.rows) {
    if (r.key.problem.seq_len == seq_len && r.key.problem.causal == causal &&
        r.key.kernel == kernel) {
      return r;
    }
  }
  throw std::runtime_error("no such row");
}

}  // namespace

TEST_CASE("a report against itself is SAME everywhere, with its own noise as the threshold") {
  const Report report = measured_report();
  const Comparison c = compare_reports(report, report, {});
  CHECK(c.rows.size() == 9);
  CHECK(c.count(Verdict::same) == 8);
  CHECK(c.count(Verdict::not_compared) == 1);  // the skipped fp32 row has no time
  CHECK_FALSE(c.regressed());
  CHECK(c.labels.empty());
  // Samples t x {1, 1.01, 0.99, 1.02, 0.995}: stdev 0.012042 t over mean 1.003 t = 0.0120056.
  CHECK(row_for(c, 1024, false).threshold == Approx(0.0120056).epsilon(1e-4));
  CHECK(row_for(c, 1024, false).ratio == Approx(1.0));
}

TEST_CASE("a change beyond the noise is SLOWER or FAILED and gates; within it is SAME") {
  const Report base = measured_report();
  Report next = measured_report();
  scale_row_time(next, 4, 1.2);    // fa1_wmma N=1024: 20% slower
  scale_row_time(next, 5, 0.8);    // fa1_wmma N=1024 causal: 20% faster
  scale_row_time(next, 6, 1.005);  // 0.5% slower, inside the 1.2% spread
  const Comparison c = compare_reports(base, next, {});
  CHECK(row_for(c, 1024, false).verdict == Verdict::slower);
  CHECK(row_for(c, 1024, false).ratio == Approx(1.2));
  CHECK(row_for(c, 1024, true).verdict == Verdict::faster);
  CHECK(row_for(c, 4096, false).verdict == Verdict::same);
  CHECK(c.regressed());

  CompareOptions strict;
  strict.threshold = 0.001;  // --threshold 0.001: the 0.5% now counts
  CHECK(row_for(compare_reports(base, next, strict), 4096, false).verdict == Verdict::slower);
  CompareOptions loose;
  loose.threshold = 0.25;
  CHECK_FALSE(compare_reports(base, next, loose).regressed());
}

TEST_CASE("a row that ran in the base and failed in the new report is FAILED, a regression") {
  const Report base = measured_report();
  Report next = measured_report();
  next.results[0].status = RowStatus::failed;
  next.results[0].reason = "rel_l2_err 0.3 > 0.005";
  const Comparison c = compare_reports(base, next, {});
  const RowComparison& r = row_for(c, 1024, false, "fa1_scalar");
  CHECK(r.verdict == Verdict::failed);
  CHECK(r.note == "new failed: rel_l2_err 0.3 > 0.005");
  CHECK(c.regressed());
}

TEST_CASE("rows present on one side only are listed, not compared") {
  const Report base = measured_report();
  Report next = measured_report();
  next.results.erase(next.results.begin() + 2);  // fa1_scalar N=4096
  next.results.push_back(next.results[0]);
  next.results.back().problem.batch = 4;
  const Comparison c = compare_reports(base, next, {});
  REQUIRE(c.only_in_base.size() == 1);
  CHECK(describe(c.only_in_base[0]) ==
        "fa1_scalar forward fp16 B=1 H=8 N=4096 d=64 on NVIDIA H200");
  REQUIRE(c.only_in_new.size() == 1);
  CHECK(c.only_in_new[0].problem.batch == 4);
}

TEST_CASE("an unauditable baseline is refused unless allowed, then labelled") {
  Report base = measured_report();
  base.provenance.auditable = false;
  base.provenance.reasons = {"built from a dirty tree"};
  const Report next = measured_report();
  CHECK_THROWS_WITH(compare_reports(base, next, {}),
                    "the baseline is not auditable (source measured; built from a dirty tree); "
                    "pass --allow-unauditable to compare anyway");
  CompareOptions allow;
  allow.allow_unauditable = true;
  const Comparison c = compare_reports(base, next, allow);
  REQUIRE(c.labels.size() == 1);
  CHECK(c.labels[0].starts_with("BASELINE NOT AUDITABLE"));
  // An unauditable new report is labelled but never refused.
  CHECK(compare_reports(next, base, {}).labels.at(0).starts_with("NEW REPORT NOT AUDITABLE"));
}

TEST_CASE("reports from different device models are refused unless allowed, then matched") {
  const Report base = measured_report();
  Report next = measured_report();
  next.devices[0].name = "NVIDIA H100 80GB HBM3";
  CHECK_THROWS_AS(compare_reports(base, next, {}), ComparisonRefused);
  CHECK_THROWS_WITH(compare_reports(base, next, {}),
                    Catch::Contains("different device models (base: NVIDIA H200; new: NVIDIA H100 "
                                    "80GB HBM3)"));
  CompareOptions allow;
  allow.allow_cross_device = true;
  const Comparison c = compare_reports(base, next, allow);
  CHECK(c.labels.at(0).starts_with("CROSS-DEVICE"));
  CHECK(c.count(Verdict::same) == 8);  // the device leaves the key; the rows still pair up
  CHECK(c.rows[0].key.device_model.empty());
}

TEST_CASE("a renamed kernel is matched through --match-kernel") {
  const Report base = measured_report();
  Report next = measured_report();
  for (ResultRow& row : next.results) {
    if (row.kernel == "fa1_scalar") row.kernel = "fa1_scalar_v2";
  }
  CHECK(compare_reports(base, next, {}).only_in_base.size() == 4);
  CompareOptions alias;
  alias.kernel_aliases = {{"fa1_scalar", "fa1_scalar_v2"}};
  const Comparison c = compare_reports(base, next, alias);
  CHECK(c.only_in_base.empty());
  CHECK(c.count(Verdict::same) == 8);
}

TEST_CASE("a historical baseline can be compared only with both allowances, loudly labelled") {
  const Report base = seed_report("H100");
  const Report next = measured_report();
  CompareOptions allow;
  allow.allow_unauditable = true;
  allow.allow_cross_device = true;
  allow.kernel_aliases = {{"cuflash-attn-v0.4.0", "fa1_scalar"}};
  const Comparison c = compare_reports(base, next, allow);
  CHECK(c.labels.size() == 2);
  CHECK(c.labels[0].starts_with("BASELINE NOT AUDITABLE (source historical"));
  // N=1024 and 4096 causal pair up with fa1_scalar; 8192 and 16384 are only in the base.
  CHECK(c.rows.size() == 2);
  CHECK(c.only_in_base.size() == 2);
  // The base has no samples, so no known noise: the threshold is the new row's spread alone.
  CHECK(row_for(c, 1024, true, "fa1_scalar").threshold == Approx(0.012).epsilon(0.01));
}

TEST_CASE("the comparison renders a table and a JSON document with the same verdicts") {
  const Report base = measured_report();
  Report next = measured_report();
  scale_row_time(next, 4, 1.2);
  const Comparison c = compare_reports(base, next, {});
  const std::string text = render_comparison(c, "old.json", "new.json");
  CHECK(text.starts_with("== old.json -> new.json\n"));
  CHECK(text.find("SLOWER") != std::string::npos);
  CHECK(text.find("7 SAME, 0 FASTER, 1 SLOWER, 0 FAILED, 1 N/A; 0 only in base, 0 only in new") !=
        std::string::npos);
  const nlohmann::json json = to_json(c);
  CHECK(json["regression"] == true);
  CHECK(json["counts"]["SLOWER"] == 1);
  CHECK(json["rows"][4]["verdict"] == "SLOWER");
  CHECK(json["rows"][4]["device_model"] == "NVIDIA H200");
  CHECK(json["rows"][8]["ratio"].is_null());
}
