#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <variant>

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

TEST_CASE("a change beyond the noise that the samples establish is SLOWER or FASTER and gates") {
  const Report base = measured_report();
  Report next = measured_report();
  // Samples t x {0.99, 0.995, 1, 1.01, 1.02}, threshold 1.2% (their relative stdev).
  // x1.2: new [min, q3] = [1.188, 1.212] t lies above base's [0.99, 1.01] t, and every new
  // sample beats every base one: U = 25 of 25, p = 0.0122 < 0.05 (test_sample_separation).
  scale_row_time(next, 4, 1.2);    // fa1_wmma N=1024: 20% slower
  scale_row_time(next, 5, 0.8);    // fa1_wmma N=1024 causal: 20% faster, mirror image
  scale_row_time(next, 6, 1.005);  // 0.5% slower, inside the 1.2% spread
  const Comparison c = compare_reports(base, next, {});
  const RowComparison& slower = row_for(c, 1024, false);
  CHECK(slower.verdict == Verdict::slower);
  CHECK(slower.ratio == Approx(1.2));
  CHECK(slower.basis == Basis::samples);
  REQUIRE(slower.samples);
  CHECK(slower.samples->gap == IntervalGap::above);
  CHECK(slower.samples->test.p_value == Approx(0.0121858));
  CHECK(row_for(c, 1024, true).verdict == Verdict::faster);
  // x1.005: new [0.99495, 1.01505] t overlaps base [0.99, 1.01] t, and 0.5% < 1.2%: SAME.
  CHECK(row_for(c, 4096, false).verdict == Verdict::same);
  CHECK(c.regressed());

  // --threshold 0.001: the 0.5% median change is now beyond the threshold, but the intervals
  // overlap, so the samples do not establish it: AMBIGUOUS, not a regression (the rule before
  // intervals called this SLOWER).
  CompareOptions strict;
  strict.threshold = 0.001;
  const Comparison strict_c = compare_reports(base, next, strict);
  CHECK(row_for(strict_c, 4096, false).verdict == Verdict::ambiguous);
  CHECK(row_for(strict_c, 4096, false).note.find("intervals overlap") != std::string::npos);
  CompareOptions loose;
  loose.threshold = 0.25;
  // x1.2 within 25%, yet its samples are apart: AMBIGUOUS, which does not gate.
  const Comparison loose_c = compare_reports(base, next, loose);
  CHECK(row_for(loose_c, 1024, false).verdict == Verdict::ambiguous);
  CHECK_FALSE(loose_c.regressed());
}

TEST_CASE("AMBIGUOUS: medians and samples disagree, in either direction, or too few samples") {
  const Report base_report = measured_report();
  CompareOptions five_percent;
  five_percent.threshold = 0.05;

  // Medians 12 -> 13 (+8.3%, beyond 5%), but [min, q3] = [10, 13] and [11, 14] overlap.
  Report base = base_report;
  Report next = base_report;
  set_row_samples(base, 4, {10, 11, 12, 13, 14});
  set_row_samples(next, 4, {11, 12, 13, 14, 15});
  const Comparison overlap_c = compare_reports(base, next, five_percent);
  const RowComparison& overlap = row_for(overlap_c, 1024, false);
  CHECK(overlap.ratio == Approx(13.0 / 12));
  CHECK(overlap.verdict == Verdict::ambiguous);
  CHECK(
      overlap.note.starts_with("median +8.3% beyond the 5.0% threshold, but the [min, q3] "
                               "intervals overlap: base [10, 13], new [11, 14] ms"));

  // Medians 1.002 -> 1.012 (+1.0%, within 5%), but [1.000, 1.003] and [1.010, 1.013] are
  // apart and U = 25 of 25, p = 0.0122: a real shift the threshold calls small.
  set_row_samples(base, 4, {1.000, 1.001, 1.002, 1.003, 1.004});
  set_row_samples(next, 4, {1.010, 1.011, 1.012, 1.013, 1.014});
  const Comparison apart_c = compare_reports(base, next, five_percent);
  const RowComparison& apart = row_for(apart_c, 1024, false);
  CHECK(apart.verdict == Verdict::ambiguous);
  CHECK(apart.note.find("within the 5.0% threshold") != std::string::npos);

  // Two samples a side: medians 1.005 -> 1.205 (+19.9%) beyond the default threshold (base's
  // relative stdev 0.00707 / 1.005 = 0.70%), intervals [1.0, 1.0075] and [1.2, 1.2075] apart,
  // but p = 0.245 (U = 4 of 4): two samples cannot establish it.
  set_row_samples(base, 4, {1.0, 1.01});
  set_row_samples(next, 4, {1.2, 1.21});
  const Comparison few_c = compare_reports(base, next, {});
  const RowComparison& few = row_for(few_c, 1024, false);
  CHECK(few.threshold == Approx(0.0070359).epsilon(1e-4));
  CHECK(few.verdict == Verdict::ambiguous);
  CHECK(few.note.find("Mann-Whitney p = 0.25 is not below 0.05 (2 vs 2 samples)") !=
        std::string::npos);
  // The significance level is the option's: at 0.5 the same samples establish the change.
  CompareOptions lax;
  lax.significance = 0.5;
  CHECK(row_for(compare_reports(base, next, lax), 1024, false).verdict == Verdict::slower);
}

TEST_CASE("--fail-on-regression gates on SLOWER and FAILED, never on AMBIGUOUS alone") {
  const Report base = measured_report();
  Report next = measured_report();
  CompareOptions strict;
  strict.threshold = 0.001;
  scale_row_time(next, 6, 1.005);  // AMBIGUOUS at --threshold 0.001 (above)
  const Comparison ambiguous = compare_reports(base, next, strict);
  CHECK(ambiguous.count(Verdict::ambiguous) == 1);
  CHECK_FALSE(ambiguous.regressed());
  scale_row_time(next, 4, 1.2);
  CHECK(compare_reports(base, next, strict).regressed());
}

TEST_CASE("the geometric mean of new/base over the rows timed on both sides") {
  const Report base = measured_report();
  Report next = measured_report();
  scale_row_time(next, 4, 1.2);
  scale_row_time(next, 5, 0.8);
  const Comparison c = compare_reports(base, next, {});
  // Eight timed rows, ratios 1.2, 0.8 and six of 1 (the skipped row has no time):
  // (1.2 * 0.8)^(1/8) = 0.96^(1/8) = 0.9949102.
  const GeometricMean mean = geometric_mean({c});
  CHECK(mean.rows == 8);
  REQUIRE(mean.ratio);
  CHECK(*mean.ratio == Approx(0.9949102));
  CHECK(render_geometric_mean(mean) == "geomean new/base 0.9949 over 8 rows timed on both sides");
  // Over two comparisons, the rows of both: the same ratios twice.
  const GeometricMean both = geometric_mean({c, c});
  CHECK(both.rows == 16);
  CHECK(*both.ratio == Approx(0.9949102));
  // Nothing timed on both sides: no ratio.
  const GeometricMean none = geometric_mean({});
  CHECK_FALSE(none.ratio);
  CHECK(render_geometric_mean(none) == "geomean new/base: no row timed on both sides");
  CHECK(to_json(none)["ratio"].is_null());
  CHECK(to_json(c)["geomean"]["rows"] == 8);
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
  CHECK_THROWS_AS(compare_reports(base, next, {}), std::invalid_argument);
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

TEST_CASE("--by shape sets every base kernel against every new kernel of the same shape") {
  // A peer report (torch's backends, say): the same shapes under two names of its own.
  Report base = measured_report();
  for (ResultRow& row : base.results) {
    row.kernel = row.kernel == "fa1_scalar" ? "peer_a" : "peer_b";
  }
  const Report next = measured_report();
  // By kernel name nothing pairs: all 9 rows on each side are left over.
  const Comparison by_kernel = compare_reports(base, next, {});
  CHECK(by_kernel.rows.empty());
  CHECK(by_kernel.only_in_base.size() == 9);
  CHECK(by_kernel.only_in_new.size() == 9);

  CompareOptions by_shape;
  by_shape.by_shape = true;
  const Comparison c = compare_reports(base, next, by_shape);
  // 4 fp16 shapes x 2 base kernels x 2 new kernels, and the fp32 shape's one row per side.
  CHECK(c.rows.size() == 17);
  CHECK(c.only_in_base.empty());
  CHECK(c.only_in_new.empty());
  CHECK(c.count(Verdict::not_compared) == 1);  // the skipped fp32 row
  // fa1_wmma's row (2.5 x its roof time) against peer_a's (fa1_scalar's, 6 x its roof time).
  const auto row_of = [&](std::string_view kernel, std::string_view base_kernel) {
    for (const RowComparison& r : c.rows) {
      if (r.key.kernel == kernel && r.base_kernel == base_kernel && r.key.problem.seq_len == 4096 &&
          r.key.problem.causal) {
        return r;
      }
    }
    throw std::runtime_error("no such row");
  };
  const RowComparison wmma_over_a = row_of("fa1_wmma", "peer_a");
  const double scalar_ms = base.results[3].timing->summary.median;  // fa1_scalar N=4096 causal
  const double wmma_ms = next.results[7].timing->summary.median;    // fa1_wmma N=4096 causal
  REQUIRE(base.results[3].problem.seq_len == 4096);
  REQUIRE(next.results[7].kernel == "fa1_wmma");
  CHECK(wmma_over_a.ratio == Approx(wmma_ms / scalar_ms));
  CHECK(wmma_over_a.verdict == Verdict::faster);
  // peer_b is fa1_wmma's own timing under another name: SAME.
  CHECK(row_of("fa1_wmma", "peer_b").verdict == Verdict::same);
  CHECK(row_of("fa1_scalar", "peer_b").verdict == Verdict::slower);

  // One mean per pairing: peer_b is fa1_wmma's own timing, so fa1_wmma over peer_b is 1 over
  // the 4 timed fp16 shapes (the fp32 row has no time).
  const std::vector<PairingMean> means = geometric_means_by_pairing(c);
  REQUIRE(means.size() == 4);
  CHECK(means[3].kernel == "fa1_wmma");
  CHECK(means[3].base_kernel == "peer_b");
  CHECK(means[3].mean.rows == 4);
  CHECK(*means[3].mean.ratio == Approx(1.0));
  CHECK(*means[2].mean.ratio < 1);  // fa1_wmma over peer_a (fa1_scalar's times)
  CHECK(geometric_means_by_pairing(compare_reports(next, next, {})).empty());

  const std::string text = render_comparison(c, "peers.json", "ours.json");
  CHECK(text.find("fa1_wmma vs peer_a") != std::string::npos);
  CHECK(text.find("fa1_wmma over peer_b: geomean new/base 1.0000 over 4 rows") !=
        std::string::npos);
  const nlohmann::json document = to_json(c);
  CHECK(document.dump().find(R"("base_kernel":"peer_a")") != std::string::npos);
  CHECK(document["geomean_by_pairing"].size() == 4);
  CHECK(document["geomean_by_pairing"][3]["rows"] == 4);

  // A shape only the base has is left over on its side, whatever its kernel.
  Report fewer = next;
  std::erase_if(fewer.results, [](const ResultRow& row) { return row.problem.seq_len == 4096; });
  const Comparison partial = compare_reports(base, fewer, by_shape);
  CHECK(partial.only_in_base.size() == 4);  // 2 kernels x 2 masks at N = 4096
  CHECK(partial.rows.size() == 9);          // 2 fp16 shapes x 4 pairs, and the fp32 row
}

TEST_CASE("--by shape refuses more row pairs than one comparison takes, before forming any") {
  // One shape, 400 kernels against 300: 120000 pairs > max_compared_pairs (100000).
  const auto many = [](int kernels, const char* prefix) {
    Report r = measured_report();
    const ResultRow row = r.results[0];
    r.results.clear();
    for (int k = 0; k < kernels; ++k) {
      r.results.push_back(row);
      // Appended, not operator+ on a char pointer: GCC 12 warns falsely (-Wrestrict).
      std::string& name = r.results.back().kernel = prefix;
      name += std::to_string(k);
    }
    return r;
  };
  CompareOptions by_shape;
  by_shape.by_shape = true;
  CHECK_THROWS_WITH(compare_reports(many(400, "a"), many(300, "b"), by_shape),
                    Catch::Contains("--by shape would set 120000 row pairs side by side, more "
                                    "than the 100000 one comparison takes"));
  CHECK(compare_reports(many(20, "a"), many(30, "b"), by_shape).rows.size() == 600);
}

TEST_CASE("--match-kernel rows name both kernels") {
  const Report base = measured_report();
  Report next = measured_report();
  for (ResultRow& row : next.results) {
    if (row.kernel == "fa1_scalar") row.kernel = "fa1_scalar_v2";
  }
  CompareOptions alias;
  alias.kernel_aliases = {{"fa1_scalar", "fa1_scalar_v2"}};
  const Comparison c = compare_reports(base, next, alias);
  for (const RowComparison& r : c.rows) {
    CHECK(r.base_kernel == (r.key.kernel == "fa1_scalar_v2" ? "fa1_scalar" : ""));
  }
  CHECK(render_comparison(c, "a", "b").find("fa1_scalar_v2 vs fa1_scalar") != std::string::npos);
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
  const RowComparison& r = row_for(c, 1024, true, "fa1_scalar");
  CHECK(r.threshold == Approx(0.012).epsilon(0.01));
  // Nor intervals: the row is judged on its medians alone, as before intervals, and says so.
  CHECK(r.basis == Basis::medians);
  CHECK_FALSE(r.samples);
  CHECK(r.note == "medians only: base has no raw samples");
  CHECK(r.verdict != Verdict::ambiguous);
  CHECK(r.verdict == (r.ratio > 1 + r.threshold   ? Verdict::slower
                      : r.ratio < 1 - r.threshold ? Verdict::faster
                                                  : Verdict::same));
}

TEST_CASE("the comparison renders a table and a JSON document with the same verdicts") {
  const Report base = measured_report();
  Report next = measured_report();
  scale_row_time(next, 4, 1.2);
  const Comparison c = compare_reports(base, next, {});
  const std::string text = render_comparison(c, "old.json", "new.json");
  CHECK(text.starts_with("== old.json -> new.json\n"));
  CHECK(text.find("SLOWER") != std::string::npos);
  CHECK(text.find("7 SAME, 0 FASTER, 1 SLOWER, 0 AMBIGUOUS, 0 FAILED, 1 N/A; 0 only in base, 0 "
                  "only in new") != std::string::npos);
  // (1.2 * 1^7)^(1/8) = 1.0230519
  CHECK(text.find("geomean new/base 1.0231 over 8 rows timed on both sides") != std::string::npos);
  const nlohmann::json json = to_json(c);
  CHECK(json["regression"] == true);
  CHECK(json["counts"]["SLOWER"] == 1);
  CHECK(json["counts"]["AMBIGUOUS"] == 0);
  CHECK(json["rows"][4]["verdict"] == "SLOWER");
  CHECK(json["rows"][4]["device_model"] == "NVIDIA H200");
  CHECK(json["rows"][4]["basis"] == "samples");
  CHECK(json["rows"][4]["samples"]["intervals_apart"] == true);
  CHECK(json["rows"][4]["samples"]["p_value"].get<double>() == Approx(0.0121858));
  CHECK(json["rows"][4]["samples"]["base_count"] == 5);
  CHECK(json["rows"][8]["ratio"].is_null());
  CHECK(json["rows"][8]["basis"].is_null());
  CHECK(json["rows"][8]["samples"].is_null());
  CHECK(json["geomean"]["ratio"].get<double>() == Approx(1.0230519));
}

TEST_CASE("compare shows K/V heads, keys and page where a row has a served shape") {
  const Report square = measured_report();
  const std::string square_text = render_comparison(compare_reports(square, square, {}), "a", "b");
  CHECK(square_text.find("Hkv") == std::string::npos);

  Report served = measured_report();
  for (ResultRow& row : served.results) {
    row.problem.kv_heads = row.problem.heads / 2;
    row.problem.kv_len = 3 * row.problem.seq_len;
    row.problem.page_size = 16;
  }
  const Comparison c = compare_reports(served, served, {});
  REQUIRE_FALSE(c.rows.empty());
  const std::string text = render_comparison(c, "a", "b");
  const std::string header = text.substr(text.find("kernel"), text.find('\n', text.find("kernel")));
  CHECK(header.find(" Hkv ") != std::string::npos);
  CHECK(header.find(" Nk ") != std::string::npos);
  CHECK(header.find(" page ") != std::string::npos);
  const AttentionProblem& p = c.rows.front().key.problem;
  CHECK(text.find(fmt::format(" {:>4} {:>7} {:>4} ", p.key_heads(), p.keys(), 16)) !=
        std::string::npos);
}

TEST_CASE(
    "compare by fastest sets each shape's new rows against the fastest base row of the shape") {
  // Two peers at every shape: peer_fast at half fa1_wmma's time, peer_slow at twice.
  const Report ours = measured_report();
  Report peers = measured_report();
  std::vector<ResultRow> rows;
  for (const ResultRow& row : peers.results) {
    if (row.kernel != "fa1_wmma") continue;
    for (auto [name, factor] : {std::pair{"peer_slow", 2.0}, std::pair{"peer_fast", 0.5}}) {
      ResultRow peer = row;
      peer.kernel = name;
      if (peer.timing) {
        for (double& ms : peer.timing->samples_ms) ms *= factor;
        peer.timing->summary = summarize(peer.timing->samples_ms);
      }
      rows.push_back(peer);
    }
  }
  peers.results = rows;
  CompareOptions fastest;
  fastest.by_shape = true;
  fastest.fastest_base = true;
  const Comparison c = compare_reports(peers, ours, fastest);
  REQUIRE_FALSE(c.rows.empty());
  for (const RowComparison& r : c.rows) {
    if (r.base_ms) CHECK(r.base_kernel == "peer_fast");  // a shape no peer ran keeps both
  }
  // One peer_slow row left out per shape a peer ran.
  const auto timed_shapes = std::count_if(rows.begin(), rows.end(), [](const ResultRow& row) {
    return row.kernel == "peer_fast" && row.status == RowStatus::ok && row.timing;
  });
  CHECK(timed_shapes > 0);
  CHECK(c.slower_base_rows == static_cast<std::size_t>(timed_shapes));
  CHECK(render_comparison(c, "peers", "ours").find("left out: another base row of the shape") !=
        std::string::npos);
  CompareOptions every;
  every.by_shape = true;
  CHECK(compare_reports(peers, ours, every).slower_base_rows == 0);
}

// Issue 20: compare carries a row's energy figures like any figure-table one
// (--figures energy/flop_per_J); a row without energy shows none.
TEST_CASE("compare --figures carries the energy figures of sweep --energy rows") {
  const Report report = every_kernel_report();
  CompareOptions options;
  options.figures = {&figure("energy/flop_per_J"), &figure("energy/joules_per_launch")};
  const Comparison c = compare_reports(report, report, options);
  const RowComparison& with = row_for(c, 1024, true, "fa2_mma");
  const ResultRow& row = *std::find_if(report.results.begin(), report.results.end(),
                                       [](const ResultRow& r) { return r.kernel == "fa2_mma"; });
  REQUIRE(with.figures.size() == 2);
  CHECK(std::get<double>(with.figures[0].base) == *row.energy->derived.flop_per_J);
  CHECK(std::get<double>(with.figures[1].next) == *row.energy->derived.joules_per_launch);
  const RowComparison& without = row_for(c, 1024, true, "fa1_wmma");
  CHECK(std::holds_alternative<std::monostate>(without.figures[0].base));
}
