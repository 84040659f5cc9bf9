#include <catch2/catch.hpp>

#include <vector>

#include "roofline/profile/recorded_launch.hpp"

using namespace cfr;

namespace {

ncu::RowCounters launch_with(std::optional<double> cycles, std::optional<double> duration_ns) {
  ncu::RowCounters launch;
  const auto put = [&](std::string_view metric, std::optional<double> value) {
    ncu::MetricValue v;
    v.value = value;
    v.text = value ? "" : "n/a";
    launch.metrics.emplace(std::string(metric), v);
  };
  put(launch_cycles_metric, cycles);
  put(launch_duration_metric, duration_ns);
  return launch;
}

Profile profile_of(const ProfileLaunches& launches, double recorded_cycles) {
  Profile p;
  p.tool = "Nsight Compute";
  p.counters.push_back({std::string(launch_cycles_metric), "cycle", recorded_cycles, ""});
  p.launches = launches;
  return p;
}

}  // namespace

TEST_CASE("median_position: the lower median, the earliest of equal values") {
  CHECK(median_position(std::vector<double>{5}) == 0);
  CHECK(median_position(std::vector<double>{9, 1, 5}) == 2);
  CHECK(median_position(std::vector<double>{1, 9}) == 0);        // lower of two
  CHECK(median_position(std::vector<double>{4, 3, 2, 1}) == 2);  // sorted 1 2 3 4: the 2
  CHECK(median_position(std::vector<double>{7, 7, 7}) == 1);     // stable: launch order
  CHECK_THROWS_AS(median_position(std::vector<double>{}), std::invalid_argument);
}

TEST_CASE("the recorded launch is the median by SM cycles, as the H100 runs need") {
  // fa1_bwd B1 H8 N2048 d128 on the H100 (results/h100/timing-check-*/): six launches in one
  // process, the first 4.84 M SM cycles, the next five 4.45-4.46 M; our timed median 4.41 M.
  // A single profiled launch took the first; the median of three takes a typical one.
  const std::vector<ncu::RowCounters> launches{
      launch_with(4.84e6, 2.45e6), launch_with(4.46e6, 2.26e6), launch_with(4.45e6, 2.25e6)};
  const ProfileLaunches record = choose_recorded_launch(launches, 1);
  CHECK(record.warmup == 1);
  CHECK(record.metric == launch_cycles_metric);
  CHECK(record.values == std::vector<std::optional<double>>{4.84e6, 4.46e6, 4.45e6});
  CHECK(record.recorded == 1);  // 4.45, 4.46, 4.84 M sorted
}

TEST_CASE("without SM cycles in every launch the duration picks; without either, the first") {
  const ProfileLaunches by_duration = choose_recorded_launch(
      {launch_with(1e6, 300), launch_with(std::nullopt, 100), launch_with(1e6, 200)}, 1);
  CHECK(by_duration.metric == launch_duration_metric);
  CHECK(by_duration.recorded == 2);
  const ProfileLaunches none =
      choose_recorded_launch({launch_with(std::nullopt, 300), launch_with(1e6, std::nullopt)}, 0);
  CHECK(none.metric.empty());
  CHECK(none.recorded == 0);
  CHECK(none.values.size() == 2);
  CHECK_THROWS_AS(choose_recorded_launch({}, 1), std::invalid_argument);
}

TEST_CASE("the launches' spread: (largest - smallest) / the recorded one") {
  // fa1_scalar d 128 N 2048 causal on the H100 (results/h100/profile-launches-f7f0f47/): launches
  // of 892.8, 974.2 and 984.4 K cycles, the median 974.2: a spread of 9.4 %, three times the
  // check's 3 %.
  const ProfileLaunches record{
      1, std::string(launch_cycles_metric), {892.8e3, 974.2e3, 984.4e3}, 1};
  CHECK(launch_spread(record) == Approx((984.4 - 892.8) / 974.2));
  CHECK_FALSE(launch_spread({1, std::string(launch_cycles_metric), {5.0}, 0}));
  CHECK_FALSE(launch_spread({1, std::string(launch_cycles_metric), {5.0, std::nullopt}, 0}));
  CHECK_FALSE(launch_spread({1, std::string(launch_cycles_metric), {5.0, 6.0}, 2}));
}

TEST_CASE("audit: a launch record that does not hold together is named") {
  ProfileLaunches record{1, std::string(launch_cycles_metric), {300.0, 100.0, 200.0}, 2};
  CHECK_FALSE(recorded_launch_mismatch(profile_of(record, 200.0)));
  SECTION("not the median") {
    record.recorded = 0;
    CHECK(recorded_launch_mismatch(profile_of(record, 300.0)) ==
          "profile.launches.recorded is 0, but the median launch by sm__cycles_elapsed.avg is 2");
  }
  SECTION("a recorded counter that is not the recorded launch's") {
    CHECK(recorded_launch_mismatch(profile_of(record, 210.0)) ==
          "profile.counters' sm__cycles_elapsed.avg is 210, but the recorded launch's is 200");
  }
  SECTION("a value edited in the list moves the median") {
    record.values[1] = 250.0;
    CHECK(recorded_launch_mismatch(profile_of(record, 200.0)) ==
          "profile.launches.recorded is 2, but the median launch by sm__cycles_elapsed.avg is 1");
  }
  SECTION("out of range, and no launches") {
    record.recorded = 3;
    CHECK(recorded_launch_mismatch(profile_of(record, 200.0)) ==
          "profile.launches.recorded is 3, but 3 launches were profiled");
    record.values.clear();
    CHECK(recorded_launch_mismatch(profile_of(record, 200.0)) ==
          "profile.launches.values: no launches");
  }
  SECTION("a report without the record (profiled before it) has nothing to check") {
    Profile p = profile_of(record, 1.0);
    p.launches.reset();
    CHECK_FALSE(recorded_launch_mismatch(p));
  }
}
