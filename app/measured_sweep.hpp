#pragma once

// The measuring half of `sweep`: every configuration on every chosen device,
// one host thread per device, the report rewritten atomically after each row.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "output_files.hpp"
#include "profile_run.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

struct MeasureOptions {
  std::string devices = "0";          // "0,1" or "all"
  std::string ceiling = "datasheet";  // datasheet | measured | FILE (a `ceilings` JSON)
  bool hot = false;
  // --l2-flush: how the L2 is emptied before each sample (kernels/measure/l2_flush.hpp).
  std::string l2_flush = "read";
  int warmup = 3;
  int min_samples = 10;
  double max_noise_percent = 0.5;  // --max-noise: relative stdev target, in percent (nvbench)
  // --throttle-threshold: a sample whose SM clock reads below this % of the
  // device's max clock is discarded and counted (nvbench's option and default).
  double throttle_threshold_percent = 75;
  double max_seconds = 2.0;
  std::uint64_t seed = 20261202;
  bool energy = false;  // --energy: the board's energy per row (docs/energy.md)
};

// Returns the options it added: without a device `sweep` names the ones given,
// since nothing is measured.
std::vector<const CLI::Option*> add_measure_options(CLI::App& command, MeasureOptions& options);

// Refuses, with one line naming the option, a --devices list that is not one
// (abc, -1, 0,0) and a --ceiling FILE that is no readable ceilings report,
// also on a machine without a GPU, where these options are otherwise ignored;
// and where a device will measure, with profile.enabled, an --ncu that is no
// executable. Asked before anything is measured: a typo costs no GPU time.
void check_measure_inputs(const MeasureOptions& measure, const ProfileOptions& profile,
                          bool will_measure);

// Returns the exit status: 0 when every row is ok or skipped, 1 when a row
// failed, 130 when interrupted (the rows finished so far are still written).
// With profile.enabled, the ok rows are profiled once the timing is done
// (profile_run.hpp).
int run_measured_sweep(const SweepOptions& options, const MeasureOptions& measure,
                       const SweepPlan& plan, const OutputFiles& outputs,
                       const ProfileOptions& profile = {});

}  // namespace cfr::app
