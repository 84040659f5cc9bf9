#pragma once

// What Nsight Compute measured for one row (`sweep --profile`), and the
// figures derived from it (docs/report-schema.md, "profile"). The counters
// are the evidence; profile_figures() derives everything else from them, the
// row's model and the ceiling, and `audit` calls it again.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cfr {

struct ProfileCounter {
  std::string metric;           // "dram__bytes_read.sum"
  std::string unit;             // as ncu printed it with --print-units base: "byte", "ns", ""
  std::optional<double> value;  // empty: unavailable, never guessed
  std::string note;             // why it is unavailable; empty when it is not
};

// The memory levels a profiled row is placed at on the roofline.
struct ProfileLevel {
  std::optional<double> bytes;  // measured
  std::optional<double> ai;     // counted FLOPs / bytes
  // Against the level's bandwidth; empty where the ceiling has none (L2
  // bandwidth comes from a `ceilings` report).
  std::optional<std::string> regime;
  std::optional<double> roof_TFLOPs;
  std::optional<double> fraction_of_roof;  // our achieved TFLOPS / roof_TFLOPs
};

struct ProfileDerived {
  std::optional<double> counted_flops;      // tensor-pipe FLOPs, or 2 x FFMA thread instructions
  std::optional<std::string> flop_counter;  // the metric and its factor, named
  ProfileLevel dram;
  ProfileLevel l2;
  std::optional<std::string> limiter;  // the resource nearest its own ceiling
  std::optional<double> limiter_fraction;
  std::optional<std::string> utilizations;  // "dram 0.410; l2 0.620; fp16_tensor 0.300"
  // The checks of issue 10: model / measured - 1 per level, counted FLOPs /
  // model FLOPs (and what the tiling predicts), our median / ncu duration.
  std::optional<double> dram_model_error;
  std::optional<double> l2_model_error;
  std::optional<double> flop_ratio;
  std::optional<double> flop_expected_ratio;
  std::optional<std::string> masked_work;
  std::optional<double> timing_ratio;
  // The timing check in SM cycles (cycle_check in profile_checks.hpp): our
  // median x our samples' SM clock, ncu's sm__cycles_elapsed.avg, their ratio.
  std::optional<double> our_cycles;
  std::optional<double> ncu_cycles;
  std::optional<double> cycle_ratio;
  // The same check inside the profiled process (profile.process_timing,
  // profile.timer_floor; process_cycle_check in profile_checks.hpp): our
  // median there x its SM clock, what the events add to a row of as many
  // kernels (the timer floor, at the process's clock), and (ours - floor) /
  // ncu's cycles. The sweep's
  // cycles over the profiled process's: how far apart the two processes'
  // launches ran (a mode each process draws).
  std::optional<double> process_cycles;
  std::optional<double> timer_floor_cycles;
  std::optional<double> process_cycle_ratio;
  std::optional<double> sweep_process_ratio;
  // Why: each pipe's use of its peak over its active cycles (tensor: the
  // HMMA pipe, which counts wgmma's HGMMA too on gh100), the shared memory's
  // wavefronts of their peak, issue slots used, cycles with no eligible warp
  // (fractions), and the top stall reasons with their shares of stalled
  // warp-cycles. The limiter above is then binding_limiter's
  // (counter_limiter.hpp); without these counters, the largest fraction.
  std::optional<double> tensor_pipe;
  std::optional<double> fma_pipe;
  std::optional<double> lsu_pipe;
  std::optional<double> shared_pipe;
  std::optional<double> issue_slots;
  std::optional<double> no_eligible;
  std::optional<std::string> top_stalls;  // "long_scoreboard 41%; barrier 22%; ..."
};

// Which of a row's profiled launches its counters are (sweep --profile
// --profile-launches K: profile-child runs `warmup` launches outside the
// profiled ranges, then K inside). The recorded launch is the median by
// `metric`, so that one launch unlike the rest of its process (a CTA
// placement that packs one SM fuller) is not what the timing check holds our
// median against (roofline/profile/recorded_launch.hpp).
struct ProfileLaunches {
  int warmup = 0;      // unprofiled launches of the row before the profiled ones
  std::string metric;  // "sm__cycles_elapsed.avg", "gpu__time_duration.sum", or empty: none had it
  std::vector<std::optional<double>> values;  // each profiled launch's, in launch order
  std::size_t recorded = 0;                   // the launch whose counters are `counters`
};

// Every profiled launch's value, or empty when a launch lacks it.
std::optional<std::vector<double>> every_launch_value(const ProfileLaunches& launches);

// How far the profiled launches differ: (largest - smallest) / the recorded
// launch's value. Where it exceeds the timing check's 3 %, one launch more or
// less moves the cycle ratio by as much. Absent with fewer than two launches
// or a launch without the value.
std::optional<double> launch_spread(const ProfileLaunches& launches);

// Our own timer inside the profiled process, over the buffers ncu's
// launches use (profile-child --time-samples): the cold timer's kept samples
// and the SM clock its probe read over them. A kernel whose CTAs land in one
// of two placements keeps the same one through a process
// (results/h100/timing-check-d5e1693/), so only a timing of the same process
// holds the timer alone to ncu's cycles.
struct ProcessTiming {
  std::vector<double> samples_ms;
  double sm_clock_MHz = 0;     // the probe's median over the samples; 0: not read
  bool stream_blocked = true;  // false: the launches' host cost is in the samples
};

// The timer's own cost for a row of `kernels` kernels: that many empty
// kernels timed as the row is (events) and profiled as it is (ncu's
// gpu__time_duration.sum over them, each profiled launch's). A cost in time,
// not cycles: the events and the launches' ramps take nanoseconds whatever
// the SM clock, and an idle GPU's clock during empty kernels is not the row's.
struct TimerFloor {
  int kernels = 0;
  ProcessTiming events;
  std::vector<std::optional<double>> ncu_ns;
};

// What the events add: their median - the median profiled launch's duration,
// in ms. Empty without samples or with a launch lacking the duration.
std::optional<double> timer_floor_ms(const TimerFloor& floor);

// (largest - smallest) / median of the process's samples, as launch_spread
// is of the profiled launches; empty without two samples.
std::optional<double> process_spread(const ProcessTiming& timing);

struct Profile {
  std::string tool;     // "Nsight Compute"
  std::string version;  // `ncu --version`'s last line
  std::string command;  // the one ncu command line every profiled row shares
  // Empty when the counters were collected; otherwise why not (ncu missing,
  // ERR_NVGPUCTRPERM, the run failed, the row's range is absent from the CSV).
  std::string unavailable;
  std::vector<ProfileCounter> counters;
  // Absent in reports profiled before several launches were: one launch,
  // the first of the row's kernel in the child process.
  std::optional<ProfileLaunches> launches;
  // Absent in reports profiled before the child timed its rows.
  std::optional<ProcessTiming> process_timing;
  std::optional<TimerFloor> timer_floor;
  ProfileDerived derived;

  bool collected() const { return unavailable.empty(); }
  // Nullptr when not recorded; a recorded counter may still be unavailable.
  const ProfileCounter* counter(std::string_view metric) const;
  std::optional<double> value(std::string_view metric) const;
};

}  // namespace cfr
