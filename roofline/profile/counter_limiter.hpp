#pragma once

// Which resource binds a profiled launch, read from Nsight Compute's pipe,
// issue and stall counters (docs/model.md, "The limiter from counters").
// Pure: the caller turns counters into fractions (profile_figures.cpp).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "roofline/profile/profile_checks.hpp"

namespace cfr {

// A resource at or above this fraction of its peak binds the launch: the
// hardware cannot sustain much more than this share of a pipe's or the HBM's
// peak (the measured streams reach 0.92-0.95 of the datasheet, the mma.sync
// loop of `ceilings` 0.60-0.66 of the tensor datasheet, which is why the pipe
// counters, not the datasheet FLOPs, decide for a tensor kernel).
inline constexpr double binding_fraction = 0.80;

// One reason warps could not issue: its warp-cycles (smsp__warps_issue_stalled_*)
// and their share of all the stalled warp-cycles counted.
struct Stall {
  std::string reason;  // "long_scoreboard"
  double warp_cycles = 0;
  double share = 0;
};

// The reasons by their warp-cycles, largest first, with their shares of the
// total, at most `count`. Empty when no cycles were counted. Throws
// std::invalid_argument for negative warp-cycles.
std::vector<Stall> top_stalls(const std::vector<Stall>& stalls, std::size_t count);

// "long_scoreboard 41%; barrier 22%; short_scoreboard 9%"
std::string stall_text(const std::vector<Stall>& stalls);

// What the counters say of one launch: every resource's use of its peak
// (the pipes from their pct_of_peak counters, DRAM, L2 and the compute
// unit's FLOPs from find_limiter), the share of issue slots used, the share of
// cycles in which no warp was eligible, and the top stalls.
struct CounterEvidence {
  std::vector<Utilization> resources;
  double issue_slots = 0;
  double no_eligible = 0;
  std::vector<Stall> stalls;  // top_stalls' order
};

// The binding resource, by this rule:
//  1. a resource at or above binding_fraction: the largest such one;
//  2. else issue slots at or above binding_fraction: "issue";
//  3. else latency: warps wait, "latency (<top stall>)", with the share of
//     cycles that had no eligible warp as its fraction ("latency" without a
//     counted stall).
struct Binding {
  std::string name;
  double fraction = 0;
};
Binding binding_limiter(const CounterEvidence& evidence);

}  // namespace cfr
