#include <catch2/catch.hpp>

#include <set>

#include "roofline/profile/counter_limiter.hpp"
#include "roofline/profile/ncu_query.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/ncu_fixtures.hpp"
#include "tests/roofline/profiled_row.hpp"

// The limiter from counters (counter_limiter.hpp, docs/model.md "The limiter
// from counters") and the cycle check, on hand numbers and on
// fixtures/ncu/why-counters.csv (hand-written in ncu's raw CSV format; its
// README gives each value's source).

using namespace cfr;
using cfr::test::h200_cc;

TEST_CASE("binding rule: a resource at 80 % binds, then issue slots, then latency") {
  const std::vector<Stall> stalls =
      top_stalls({{"barrier", 2}, {"long_scoreboard", 5}, {"wait", 1}, {"mio_throttle", 2}}, 3);
  // 10 warp-cycles: long_scoreboard 50 %, then barrier and mio_throttle (ties keep their order).
  REQUIRE(stalls.size() == 3);
  CHECK(stall_text(stalls) == "long_scoreboard 50%; barrier 20%; mio_throttle 20%");

  CounterEvidence evidence{{{"dram", 0.79}, {"tensor_pipe", 0.62}}, 0.30, 0.71, stalls};
  CHECK(binding_limiter(evidence).name == "latency (long_scoreboard)");
  CHECK(binding_limiter(evidence).fraction == 0.71);  // the cycles without an eligible warp
  evidence.resources.push_back({"shared_pipe", 0.80});
  evidence.resources.push_back({"l2", 0.85});
  CHECK(binding_limiter(evidence).name == "l2");  // the largest of those at 80 % or more
  evidence.resources.clear();
  evidence.issue_slots = 0.86;
  CHECK(binding_limiter(evidence).name == "issue");
  evidence.issue_slots = 0.2;
  evidence.stalls.clear();
  CHECK(binding_limiter(evidence).name == "latency");
  CHECK(top_stalls({{"wait", 0}}, 3).empty());
  CHECK_THROWS_AS(top_stalls({{"wait", -1}}, 3), std::invalid_argument);
}

TEST_CASE("the cycle check takes the clock out of the timing ratio") {
  // 1.52 ms at 1815 MHz = 2,758,800 cycles against ncu's 2,757,175.2.
  const CycleCheck check = cycle_check(1.52, 1815, 2757175.2);
  CHECK(check.our_cycles == Approx(2758800));
  CHECK(check.ratio == Approx(1.000589).epsilon(1e-6));
  CHECK_THROWS_WITH(cycle_check(1.52, 0, 1), "our SM clock must be positive, got 0");
  CHECK(timing_check(std::nullopt, 1.01, 0.95)->basis == "cycles");
  CHECK(timing_check(std::nullopt, std::nullopt, 0.95)->basis == "seconds");
  CHECK(timing_check(std::nullopt, std::nullopt, 0.95)->ratio == 0.95);
  CHECK_FALSE(timing_check(std::nullopt, std::nullopt, std::nullopt));
  CHECK(timing_check(0.99, 1.08, 0.95)->basis == "process cycles");
  CHECK(timing_check(0.99, 1.08, 0.95)->ratio == 0.99);
}

TEST_CASE("inside the profiled process the timer floor comes off our cycles") {
  // 0.060 ms at 1980 MHz = 118,800 cycles; the events add 9,800 to a row of
  // this many kernels; ncu counted 109,000: (118,800 - 9,800) / 109,000 = 1.
  const ProcessCycleCheck check = process_cycle_check(0.060, 1980, 9800, 109000);
  CHECK(check.our_cycles == Approx(118800));
  CHECK(check.floor_cycles == 9800);
  CHECK(check.ratio == Approx(1.0));
  // Without the floor the same row reads 1.09: the short rows' excess.
  CHECK(process_cycle_check(0.060, 1980, 0, 109000).ratio == Approx(1.0899).epsilon(1e-4));
  CHECK_THROWS_WITH(process_cycle_check(0.060, 1980, 118800, 109000),
                    "the timer floor (118800 cycles) is not below our cycles (118800)");
  CHECK_THROWS_AS(process_cycle_check(0.060, 1980, 0, 0), std::invalid_argument);
}

namespace {

// Every metric sweep --profile asks for, as a chip that has them all (the
// recorded gh100 query predates the new ones: fixtures/ncu/README.md).
ncu::MetricNames every_metric() {
  ncu::MetricNames names;
  for (const std::string& metric : profile_metrics()) {
    names.emplace(ncu::metric_base(metric));
  }
  return names;
}

// Row `index` of why-counters.csv as sweep --profile records it, timed at
// `median_ms` (three samples around it) with the probe's `clock_MHz`.
ResultRow fixture_row(const KernelDescription& kernel, const AttentionProblem& problem, int index,
                      double median_ms, double clock_MHz) {
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  ResultRow row =
      model_row(kernel, problem, ceiling, FlopConvention::exact, h200_cc, test::h200_l2_inputs());
  row.timing = Timing{};
  row.timing->samples_ms = {median_ms * 0.999, median_ms, median_ms * 1.002};
  row.timing->summary = summarize(row.timing->samples_ms);
  row.timing->sm_clock_MHz = clock_MHz;
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, ceiling);
  const auto rows = ncu::group_rows(ncu::parse_raw_csv(test::read_fixture("why-counters.csv")));
  row.profile = Profile{};
  row.profile->counters = profile_counters(rows.at(index), every_metric());
  row.profile->derived = profile_figures(row, ceiling, h200_cc);
  return row;
}

}  // namespace

TEST_CASE("fa2_mma d128 from its counters: latency-bound, waiting on long scoreboard") {
  const ResultRow row =
      fixture_row(fa2_mma_kernel, {1, 16, 8192, 128, false, DType::fp16}, 0, 1.52, 1815);
  const ProfileDerived& d = row.profile->derived;
  for (const ProfileCounter& c : row.profile->counters) {
    INFO(c.metric);
    CHECK(c.value);
  }
  CHECK(*d.tensor_pipe == Approx(0.6148));  // HMMA 61.48 %, GMMA 0
  CHECK(*d.fma_pipe == Approx(0.1231));
  CHECK(*d.lsu_pipe == Approx(0.0807));
  CHECK(*d.shared_pipe == Approx(0.3402));
  CHECK(*d.issue_slots == Approx(0.2744));
  CHECK(*d.no_eligible == Approx(0.7118));
  // Of 283,623,308 stalled warp-cycles: 39.1 %, 22.9 %, 14.1 %.
  CHECK(*d.top_stalls == "long_scoreboard 39%; math_pipe_throttle 23%; wait 14%");
  // Nothing at 80 %: DRAM 0.018, L2 0.141, fp16_tensor FLOPs 0.354 of 989.4, tensor pipe 0.615.
  CHECK(*d.utilizations ==
        "dram 0.018; l2 0.141; fp16_tensor 0.354; tensor_pipe 0.615; fma_pipe 0.123; "
        "lsu_pipe 0.081; shared_pipe 0.340");
  CHECK(*d.limiter == "latency (long_scoreboard)");
  CHECK(*d.limiter_fraction == Approx(0.7118));
  // Seconds say 3.2 % fast (1.52 / 1.57104 ms); cycles, at our 1815 MHz against ncu's
  // 1755, agree to 0.06 %.
  CHECK(*d.timing_ratio == Approx(0.96751).epsilon(1e-5));
  CHECK(*d.ncu_cycles == 2757175.2);
  CHECK(*d.cycle_ratio == Approx(1.000589).epsilon(1e-6));
}

TEST_CASE("fa1_scalar d64 from its counters: bound by the shared-memory pipe") {
  const ResultRow row =
      fixture_row(fa1_scalar_kernel, {1, 8, 16384, 64, false, DType::fp16}, 1, 16.0, 1980);
  const ProfileDerived& d = row.profile->derived;
  CHECK(*d.counted_flops == 2.0 * 274877906944);  // FFMA x 2 = the model's FLOPs
  CHECK(*d.limiter == "shared_pipe");
  CHECK(*d.limiter_fraction == Approx(0.8236));
  CHECK(*d.top_stalls == "mio_throttle 35%; short_scoreboard 25%; barrier 12%");
  CHECK_FALSE(d.tensor_pipe.value_or(1) > 0);
}

TEST_CASE("without the issue counters the limiter is the largest fraction, as before") {
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  ResultRow row = test::profiled_row(ceiling);  // the counters of reports before issue 23
  CHECK(*row.profile->derived.limiter == "l2");
  CHECK_FALSE(row.profile->derived.cycle_ratio);  // no sm__cycles_elapsed.avg, no clock
  test::add_why_counters(*row.profile);
  row.timing->sm_clock_MHz = 1980;
  const ProfileDerived d = profile_figures(row, ceiling, h200_cc);
  // 0.0505 ms x 1980 MHz = 99,990 cycles over 99,000.
  CHECK(*d.cycle_ratio == Approx(1.01));
  CHECK(*d.limiter == "latency (long_scoreboard)");
  CHECK(*d.limiter_fraction == Approx(0.55));
  // In the profiled process: (110,880 - 11,880) / 99,000, and the sweep ran 99,990 / 110,880.
  CHECK(*d.process_cycles == Approx(110880));
  CHECK(*d.timer_floor_cycles == Approx(11880));
  CHECK(*d.process_cycle_ratio == Approx(1.0));
  CHECK(*d.sweep_process_ratio == Approx(99990.0 / 110880));
  CHECK(timing_check(d.process_cycle_ratio, d.cycle_ratio, d.timing_ratio)->basis ==
        "process cycles");
}
