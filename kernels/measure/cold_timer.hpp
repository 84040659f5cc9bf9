#pragma once

// The cold measurement loop (nvbench's measure_cold, our code): warm-up runs,
// then per sample flush L2, block the stream, probe the SM clock, record events
// around the launch, release, synchronize; throttled samples are discarded and
// sampling stops on a relative-stdev criterion or a cap.
//
// Unlike nvbench, a configuration whose every sample reads a low clock (a
// launch too small to raise the GPU's clocks) does not come back empty: see
// TimingResult::kept_throttled_samples.

#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/measure/l2_flush.hpp"

namespace cfr::measure {

struct TimingOptions {
  int warmup_runs = 3;
  int min_samples = 10;
  int max_samples = 10000;
  double target_rel_stdev = 0.005;
  double max_seconds = 2.0;  // wall-clock cap per configuration, warm-up included
  bool flush_l2 = true;
  L2FlushMode l2_flush_mode = L2FlushMode::read;  // how, when flush_l2
  // Fraction of the device's max SM clock below which a sample is discarded as throttled.
  double throttle_threshold = 0.75;
  // Hold the stream while the sample is enqueued (stream_blocker.hpp). Off
  // where launches wait on the host anyway (a process under Nsight Compute,
  // which serializes them), so that no sample waits out the blocker's
  // timeout; the events then also time the launch's host-side cost.
  bool block_stream = true;
};

struct TimingResult {
  std::vector<double> samples_ms;  // every kept sample, in order
  int warmup_runs = 0;
  bool l2_flush = true;
  std::string l2_flush_mode;                 // "read" or "memset" when l2_flush, else empty
  std::vector<double> sm_clock_MHz_samples;  // one per kept sample; 0 where the probe failed
  double sm_clock_MHz = 0;                   // median of the probe over kept samples
  double sm_clock_min_MHz = 0;  // lowest probe reading of any sample, discarded ones included
  double max_sm_clock_MHz = 0;  // device max, for reference
  int throttled_discarded = 0;
  bool throttled = false;  // any sample discarded or median clock under threshold
  // True when fewer than min_samples unthrottled samples were taken by the
  // cap: the throttled ones were then kept (in order) rather than report
  // nothing, throttled_discarded is 0 and throttled is true.
  bool kept_throttled_samples = false;
  bool noise_target_met = false;
  std::string stop_reason;  // "noise target met", "time cap", "sample cap"
  // False when the stream blocker timed out because the launch waits on the
  // host (that sample was discarded and later ones ran without the blocker),
  // or when options.block_stream was off.
  bool stream_blocked = true;
};

// launch(stream) enqueues the work once and returns its cudaError_t.
//
// `stream` must belong to the current device. Any CUDA error (from launch,
// from cudaGetLastError after it, or from the timer's own calls) aborts and is
// returned, and `out` holds no samples. An error pending before the call is
// returned without running anything.
cudaError_t time_cold(const std::function<cudaError_t(cudaStream_t)>& launch,
                      const TimingOptions& options, cudaStream_t stream, TimingResult& out);

}  // namespace cfr::measure
