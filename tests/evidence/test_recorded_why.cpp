// The limiter, the cycle check and the interval on counters Nsight Compute
// recorded on the H200 (issue 23): results/h200/profile/limiter.json, written
// by `tests/gpu/device_run.sh limiter` (fa2_mma and fa1_wmma, N 4096 and
// 16384, d 64 and 128). Its counters are the fixture; tampering with one of
// them must change what `audit` recomputes.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/interval_coverage.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/profile/recorded_launch.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/ncu_fixtures.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

Report recorded() {
  return report_from_json(nlohmann::json::parse(
      test::read_text(std::string(CFR_SOURCE_ROOT) + "/results/h200/profile/limiter.json")));
}

ProfileCounter& counter(ResultRow& row, std::string_view metric) {
  for (ProfileCounter& c : row.profile->counters) {
    if (c.metric == metric) return c;
  }
  FAIL("no counter " << metric);
  throw;
}

bool finds(const AuditResult& result, FindingKind kind, std::string_view text) {
  for (const Finding& f : result.findings) {
    if (f.kind == kind && f.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the recorded counters give each row's limiter and a cycle ratio within 3 %") {
  const Report report = recorded();
  REQUIRE(report.results.size() == 8);
  CHECK(audit_report(report).consistent());
  for (const ResultRow& row : report.results) {
    INFO(row_label(row));
    REQUIRE(row.profile);
    const ProfileDerived& d = row.profile->derived;
    REQUIRE(d.limiter);
    // fa1_wmma at d 128 moves 1.5 times its structure's bytes through L2 (docs/model.md):
    // the L2 binds it; every other row waits on its own tensor-core results.
    const bool l2_bound = row.kernel == "fa1_wmma" && row.problem.head_dim == 128;
    if (l2_bound) {
      CHECK(*d.limiter == "l2");
    } else if (row.kernel == "fa2_mma") {
      CHECK(*d.limiter == "latency (wait)");
    } else {
      CHECK(d.limiter->rfind("latency", 0) == 0);
    }
    REQUIRE(d.cycle_ratio);
    CHECK(*d.cycle_ratio == Approx(1).margin(0.03));
    CHECK(d.tensor_pipe);
    CHECK(d.no_eligible);
  }
}

TEST_CASE("the recorded DRAM bytes lie inside each row's L2-aware interval") {
  // The report predates the interval in rows: recompute the model figures as audit would.
  Report report = recorded();
  for (ResultRow& row : report.results) {
    row.model = model_figures(kernel_record(row), row.problem, report.ceiling,
                              row.model->flops.convention, row.model->l2_inputs);
    REQUIRE(row.model->dram_interval);
  }
  const IntervalCoverage coverage = interval_coverage(report);
  CHECK(coverage.rows == 8);
  CHECK(coverage.inside == 8);
}

TEST_CASE("a tampered recorded counter is a mismatch in audit") {
  SECTION("the SM cycles: the cycle ratio no longer recomputes") {
    Report report = recorded();
    counter(report.results[0], "sm__cycles_elapsed.avg").value.value() *= 1.05;
    CHECK(finds(audit_report(report), FindingKind::mismatch, "profile.checks.cycle_ratio"));
  }
  SECTION("cycles with no eligible warp: the limiter's share no longer recomputes") {
    Report report = recorded();
    counter(report.results[0], "smsp__issue_inst0.avg.pct_of_peak_sustained_active").value = 5.0;
    CHECK(finds(audit_report(report), FindingKind::mismatch, "profile.limiter"));
  }
  SECTION("DRAM bytes: the measured level moves, and outside the interval") {
    Report report = recorded();
    counter(report.results[0], "dram__bytes_read.sum").value.value() *= 20;
    const AuditResult result = audit_report(report);
    CHECK(finds(result, FindingKind::mismatch, "profile.levels.dram.bytes"));
  }
}

TEST_CASE("a row's launch record travels through the JSON, and audit holds it to its counters") {
  Report report = recorded();
  ResultRow& row = report.results[0];
  const double cycles = row.profile->value("sm__cycles_elapsed.avg").value();
  row.profile->launches =
      ProfileLaunches{1, "sm__cycles_elapsed.avg", {cycles * 1.09, cycles, cycles * 0.97}, 1};
  Report again = report_from_json(nlohmann::json::parse(to_json(report).dump()));
  REQUIRE(again.results[0].profile->launches);
  CHECK(again.results[0].profile->launches->values == row.profile->launches->values);
  CHECK(launch_spread(*again.results[0].profile->launches) == Approx(0.12));
  CHECK(audit_report(again).consistent());
  SECTION("the record names another launch than the median") {
    again.results[0].profile->launches->recorded = 0;
    CHECK(finds(audit_report(again), FindingKind::mismatch, "the median launch by"));
  }
  SECTION("the recorded counter is edited") {
    counter(again.results[0], "sm__cycles_elapsed.avg").value.value() *= 1.05;
    CHECK(finds(audit_report(again), FindingKind::mismatch, "but the recorded launch's is"));
  }
  SECTION("a launch without the metric: written as null, read back, named by audit") {
    row.profile->launches->values[2] = std::nullopt;
    Report with_null = report_from_json(nlohmann::json::parse(to_json(report).dump()));
    CHECK(with_null.results[0].profile->launches->values[2] == std::nullopt);
    CHECK(finds(audit_report(with_null), FindingKind::mismatch,
                "profile.launches.values: a launch without sm__cycles_elapsed.avg"));
  }
}

TEST_CASE("a row's timing in the profiled process and its timer floor: JSON, figures, audit") {
  Report report = recorded();
  ResultRow& row = report.results[0];
  const double ncu = row.profile->value("sm__cycles_elapsed.avg").value();
  // The floor: events 8 us over one empty kernel ncu saw take 2 us: 6 us, 11,880 cycles at
  // the process's 1980 MHz. Our samples there put (ours - floor) at exactly ncu's cycles.
  const double clock = 1980;
  const double median_ms = (ncu + 11880) / (clock * 1e3);
  row.profile->process_timing =
      ProcessTiming{{median_ms * 0.99, median_ms, median_ms * 1.02}, clock, true};
  row.profile->timer_floor =
      TimerFloor{1, {{0.0079, 0.0080, 0.0081}, 1200, true}, {2100, 2000, 1900}};
  row.profile->derived = profile_figures(row, report.ceiling, ComputeCapability{9, 0});
  const ProfileDerived& d = row.profile->derived;
  REQUIRE(d.process_cycle_ratio);
  CHECK(*d.timer_floor_cycles == Approx(11880));
  CHECK(*d.process_cycles == Approx(ncu + 11880));
  CHECK(*d.process_cycle_ratio == Approx(1.0));
  CHECK(*d.sweep_process_ratio == Approx(*d.our_cycles / *d.process_cycles));

  Report again = report_from_json(nlohmann::json::parse(to_json(report).dump()));
  const Profile& read = *again.results[0].profile;
  REQUIRE(read.process_timing);
  CHECK(read.process_timing->samples_ms == row.profile->process_timing->samples_ms);
  REQUIRE(read.timer_floor);
  CHECK(read.timer_floor->ncu_ns == row.profile->timer_floor->ncu_ns);
  CHECK(read.timer_floor->kernels == 1);
  CHECK(audit_report(again).consistent());
  SECTION("a sample of the profiled process is edited") {
    again.results[0].profile->process_timing->samples_ms[1] *= 1.05;
    CHECK(finds(audit_report(again), FindingKind::mismatch, "profile.checks.process_cycle_ratio"));
  }
  SECTION("the floor's ncu duration is edited") {
    again.results[0].profile->timer_floor->ncu_ns[1] = 7000;
    CHECK(finds(audit_report(again), FindingKind::mismatch, "profile.checks.timer_floor_cycles"));
  }
  SECTION("a negative sample or floor duration is refused when read") {
    nlohmann::json json = to_json(report);
    json["results"][0]["profile"]["process_timing"]["samples_ms"][0] = -0.1;
    CHECK_THROWS_WITH(report_from_json(json),
                      Catch::Contains("process_timing.samples_ms[0]: must be positive"));
    json = to_json(report);
    json["results"][0]["profile"]["timer_floor"]["ncu_ns"][2] = -5;
    CHECK_THROWS_WITH(report_from_json(json),
                      Catch::Contains("timer_floor.ncu_ns[2]: must not be negative"));
  }
  SECTION("a floor timed with the stream blocker does not come off a row timed without it") {
    ResultRow unblocked = row;
    unblocked.profile->timer_floor->events.stream_blocked = false;
    const ProfileDerived again_d =
        profile_figures(unblocked, report.ceiling, ComputeCapability{9, 0});
    CHECK(again_d.process_cycles);
    CHECK_FALSE(again_d.timer_floor_cycles);
    CHECK_FALSE(again_d.process_cycle_ratio);
  }
  SECTION("a floor launch without its duration: no floor, no process check, and audit says so") {
    again.results[0].profile->timer_floor->ncu_ns[0] = std::nullopt;
    CHECK(finds(audit_report(again), FindingKind::mismatch, "profile.checks.process_cycle_ratio"));
  }
}
