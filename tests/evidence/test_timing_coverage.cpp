#include <catch2/catch.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/timing_coverage.hpp"
#include "tests/roofline/profiled_row.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

// The hand-made profiled row (tests/roofline/profiled_row.hpp: 0.0505 ms, 99,000 SM cycles,
// a process timing and a timer floor that make the process check exactly 1), its profiled
// launches set to `launch_values` (the median second, and the recorded counter), its process
// samples scaled by `process_scale` and the sweep's by `sweep_scale`.
ResultRow timed_row(const CeilingRecord& ceiling, std::vector<std::optional<double>> launch_values,
                    double process_scale, double sweep_scale = 1) {
  ResultRow row = test::profiled_row(ceiling);
  test::add_why_counters(*row.profile);
  for (ProfileCounter& counter : row.profile->counters) {
    if (counter.metric == "sm__cycles_elapsed.avg") counter.value = launch_values[1];
  }
  row.profile->launches->values = std::move(launch_values);
  for (double& sample : row.profile->process_timing->samples_ms) sample *= process_scale;
  for (double& sample : row.timing->samples_ms) sample *= sweep_scale;
  row.timing->summary = summarize(row.timing->samples_ms);
  row.timing->sm_clock_MHz = 1980;
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, ceiling);
  row.profile->derived = profile_figures(row, ceiling, test::h200_cc);
  return row;
}

Report report_of_timed_rows() {
  Report r;
  r.provenance.source = ProvenanceSource::measured;
  r.ceiling = test::h200_profile_ceiling();
  // 0: steady and within; 1: steady, 11 % slow by our timer; 2: ncu's launches 9 % apart and
  // outside; 3: under 50 us, not counted.
  r.results.push_back(timed_row(r.ceiling, {99500.0, 99000.0, 98800.0}, 1.0));
  r.results.push_back(timed_row(r.ceiling, {99500.0, 99000.0, 98800.0}, 1.1));
  r.results.push_back(timed_row(r.ceiling, {99000.0, 108000.0, 108900.0}, 1.0));
  r.results.push_back(timed_row(r.ceiling, {99500.0, 99000.0, 98800.0}, 1.1, 0.9));
  return r;
}

}  // namespace

TEST_CASE("timing coverage counts rows of 50 us or more within 3 %, and the steady ones apart") {
  const Report report = report_of_timed_rows();
  const TimingCoverage c = timing_coverage(report);
  CHECK(c.rows == 3);
  CHECK(c.within == 1);
  CHECK(c.steady == 2);
  CHECK(c.steady_within == 1);
  REQUIRE(c.outside.size() == 2);
  CHECK(c.outside[0].row == 1);
  CHECK(c.outside[0].check.basis == "process cycles");
  CHECK(c.outside[0].check.ratio == Approx(1.1 + 0.1 * 11880 / 99000.0));
  CHECK(c.outside[1].row == 2);
  // The recorded launch is the median, 108,000: (110,880 - 11,880) / 108,000.
  CHECK(*c.outside[1].launch_spread == Approx(9900.0 / 108000));
  CHECK(describe(c) ==
        "timing check within ±3 % on 1 of 3 profiled rows of 50 µs or more, on 1 of the 2 whose "
        "launches are steady");
  CHECK(describe(c.outside[1]) ==
        "timing check 0.917 by process cycles, outside ±3 %; ncu's launches spread 9.2 %, the "
        "profiled process's samples 2.7 %");
  CHECK(describe(TimingCoverage{}).empty());
  CHECK(process_spread(ProcessTiming{{1.0}, 1980, true}) == std::nullopt);
}

TEST_CASE("audit notes the timing coverage and each row outside, without failing") {
  Report report = report_of_timed_rows();
  const AuditResult result = audit_report(report);
  std::size_t outside = 0;
  bool summary = false;
  for (const Finding& f : result.findings) {
    if (f.message.find("outside ±3 %") != std::string::npos) {
      CHECK(f.kind == FindingKind::note);
      ++outside;
    }
    summary = summary || f.message.rfind("timing check within ±3 % on 1 of 3", 0) == 0;
  }
  CHECK(outside == 2);
  CHECK(summary);
}
