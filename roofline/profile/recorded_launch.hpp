#pragma once

// Which of a row's profiled launches gives the row its counters. A single
// profiled launch is one draw of how the CTAs land on the SMs: on an H100,
// ncu's SM cycles of six launches of one row in one process
// (results/h100/timing-check-d64d6e5/) put one fa1_bwd launch 9 % above the
// other five (its dQ kernel had 5 CTAs on some SM, the others 4) and one
// fa1_wmma launch at N 4096 d 64 9 % below the rest (4 CTAs at most on an SM
// instead of 5). The median launch is what our median of many timed launches
// is compared with. It removes an odd launch, not the mode a whole process
// runs in: the modes persist through a process (results/h100/timing-check-d5e1693/).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/profile/ncu_csv.hpp"
#include "roofline/report/row_profile.hpp"

namespace cfr {

// The metrics the median is taken by, in order of preference: cycles first,
// so that a clock that moved between launches does not pick the launch.
inline constexpr std::string_view launch_cycles_metric = "sm__cycles_elapsed.avg";
inline constexpr std::string_view launch_duration_metric = "gpu__time_duration.sum";

// The position of the lower median of `values` (the element at (n-1)/2 once
// sorted; among equal values the earliest launch). Throws
// std::invalid_argument for an empty list.
std::size_t median_position(std::span<const double> values);

// The record of `launches` (one row's, in launch order; not empty): the
// median by launch_cycles_metric where every launch has it, else by
// launch_duration_metric where every launch has that, else the first launch
// with an empty metric. Throws std::invalid_argument for no launches.
ProfileLaunches choose_recorded_launch(const std::vector<ncu::RowCounters>& launches, int warmup);

// Why a profile's launch record does not hold together, for `audit`: the
// recorded launch is not the median of the values, or the recorded counters'
// value of the metric is not the recorded launch's. Empty when it holds or
// the profile has no record.
std::optional<std::string> recorded_launch_mismatch(const Profile& profile);

}  // namespace cfr
