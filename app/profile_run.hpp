#pragma once

// `sweep --profile`: after the timed sweep, one Nsight Compute process
// re-runs every ok row in this tool's profile-child mode (a warm-up launch,
// then --profile-launches profiled ones), and each row gets the median
// launch's counters and the figures derived from them (row.profile). Timing
// runs stay unprofiled.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "roofline/model/gpu_table.hpp"
#include "roofline/report/report.hpp"

namespace cfr::app {

struct ProfileOptions {
  bool enabled = false;
  std::string ncu = "ncu";  // a path, or a name looked up on PATH
  // Profiled launches of each row, after one unprofiled warm-up launch; the
  // row's counters are the median launch's (roofline/profile/recorded_launch.hpp).
  int launches = 3;
  // Samples of each row the child times first, over the buffers ncu's
  // launches use, with the timer floors (docs/model.md §8.2); 0: none.
  int time_samples = 10;
  // The sweep's cold-timer settings, which the child times with too.
  struct TimerSettings {
    int warmup = 3;
    double max_seconds = 2.0;
    double max_noise_percent = 0.5;
    double throttle_percent = 75;
    std::string l2_flush = "read";  // read, memset, or none (--hot)
  } timer;
  // The sweep's --plugin files: the child loads them too, so plugin rows
  // are profiled like built-in ones.
  std::vector<std::string> plugins;
};

void add_profile_options(CLI::App& command, ProfileOptions& options);

// Why --ncu names no executable ("ncu not found: ..."), or empty when it does:
// asked before a sweep measures anything, so a typo costs no GPU time.
std::optional<std::string> ncu_not_found(const ProfileOptions& options);

// Gives every ok row a profile: its counters, or why there are none (ncu
// missing, no permission for the counters, a failed run, no launches in the
// row's range). Never throws for ncu's problems: the sweep completes and its
// auditability does not depend on the profile. `gpus` names ncu's chip for
// the device (its row's ncu_chip). Returns one line for the screen.
std::string profile_report(Report& report, const ProfileOptions& options, const GpuTable& gpus,
                           std::uint64_t seed);

}  // namespace cfr::app
