#include "kernels/measure/cold_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <thread>

#include "kernels/measure/clock_probe.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"
#include "kernels/measure/stream_blocker.hpp"
#include "roofline/core/statistics.hpp"

namespace cfr::measure {
namespace {

// After a throttled sample, give the GPU this long to recover (nvbench's
// default throttle recovery delay).
constexpr std::chrono::milliseconds throttle_recovery_delay{50};

// Mean and sample standard deviation kept online (Welford), so the stopping
// test costs O(1) per sample; cfr::summarize gives the reported figures.
class RunningStdev {
 public:
  void add(double x) {
    ++count_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(count_);
    squares_ += delta * (x - mean_);
  }
  double relative() const {
    if (count_ < 2 || mean_ <= 0) return 0;
    return std::sqrt(squares_ / static_cast<double>(count_ - 1)) / mean_;
  }

 private:
  long long count_ = 0;
  double mean_ = 0;
  double squares_ = 0;
};

struct SampleReading {
  float ms = 0;
  double MHz = 0;
  bool blocker_timed_out = false;
};

class ColdSampler {
 public:
  ColdSampler(int device, bool flush_l2, L2FlushMode mode, bool block_stream)
      : probe_(device), use_blocker_(block_stream) {
    if (flush_l2) flusher_.emplace(device, mode);
  }

  cudaError_t warm_up(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream) {
    if (flusher_) CFR_CUDA_CHECK_NOEXCEPT(flusher_->flush(stream));
    CFR_CUDA_CHECK_NOEXCEPT(launch(stream));
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());
    return cudaStreamSynchronize(stream);
  }

  cudaError_t sample(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream,
                     SampleReading& reading) {
    if (flusher_) CFR_CUDA_CHECK_NOEXCEPT(flusher_->flush(stream));
    CFR_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
    cudaError_t enqueued = cudaSuccess;
    try {
      BlockerRelease release(blocker_);
      enqueued = enqueue(launch, stream);
    } catch (...) {
      // launch threw: the blocker is released; let the queued probes finish
      // before their buffers go away.
      (void)cudaStreamSynchronize(stream);
      throw;
    }
    const cudaError_t synced = cudaStreamSynchronize(stream);  // drains the queue on error too
    CFR_CUDA_CHECK_NOEXCEPT(enqueued);
    CFR_CUDA_CHECK_NOEXCEPT(synced);
    reading.blocker_timed_out = use_blocker_ && blocker_.timed_out();
    if (reading.blocker_timed_out) use_blocker_ = false;
    CFR_CUDA_CHECK_NOEXCEPT(cudaEventElapsedTime(&reading.ms, start_, stop_));
    reading.MHz = probe_.MHz();
    return cudaSuccess;
  }

 private:
  cudaError_t enqueue(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream) {
    if (use_blocker_) CFR_CUDA_CHECK_NOEXCEPT(blocker_.block(stream));
    CFR_CUDA_CHECK_NOEXCEPT(probe_.start(stream));
    CFR_CUDA_CHECK_NOEXCEPT(cudaEventRecord(start_, stream));
    CFR_CUDA_CHECK_NOEXCEPT(launch(stream));
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());
    CFR_CUDA_CHECK_NOEXCEPT(cudaEventRecord(stop_, stream));
    return probe_.stop(stream);
  }

  std::optional<L2Flusher> flusher_;
  ClockProbe probe_;
  StreamBlocker blocker_;
  CudaEvent start_;
  CudaEvent stop_;
  bool use_blocker_;
};

double median_of(const std::vector<double>& values) {
  std::vector<double> positive;
  std::copy_if(values.begin(), values.end(), std::back_inserter(positive),
               [](double v) { return v > 0; });
  return summarize(positive).median;
}

}  // namespace

cudaError_t time_cold(const std::function<cudaError_t(cudaStream_t)>& launch,
                      const TimingOptions& options, cudaStream_t stream, TimingResult& out) {
  out = TimingResult{};
  out.l2_flush = options.flush_l2;
  if (options.flush_l2) out.l2_flush_mode = std::string(to_string(options.l2_flush_mode));
  CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());

  const auto wall_start = std::chrono::steady_clock::now();
  const auto seconds_elapsed = [&wall_start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };

  try {
    int device = 0;
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetDevice(&device));
    int clock_kHz = 0;
    CFR_CUDA_CHECK_NOEXCEPT(cudaDeviceGetAttribute(&clock_kHz, cudaDevAttrClockRate, device));
    out.max_sm_clock_MHz = clock_kHz / 1000.0;
    // No throttle test when the device reports no clock.
    const double throttle_MHz = options.throttle_threshold * out.max_sm_clock_MHz;

    ColdSampler sampler(device, options.flush_l2, options.l2_flush_mode, options.block_stream);
    out.stream_blocked = options.block_stream;

    for (int run = 0; run < options.warmup_runs; ++run) {
      CFR_CUDA_CHECK_NOEXCEPT(sampler.warm_up(launch, stream));
      ++out.warmup_runs;
    }

    struct Sample {
      double ms;
      double MHz;
      bool throttled;
    };
    std::vector<Sample> taken;  // every valid sample, throttled ones included, in order
    RunningStdev noise;         // of the kept (unthrottled) samples
    std::size_t kept = 0;
    const auto max_samples = static_cast<std::size_t>(std::max(options.max_samples, 1));
    const auto min_samples = static_cast<std::size_t>(std::max(options.min_samples, 1));
    while (true) {
      SampleReading reading;
      CFR_CUDA_CHECK_NOEXCEPT(sampler.sample(launch, stream, reading));
      if (reading.blocker_timed_out) {
        out.stream_blocked = false;  // the launch ran late; its time means nothing
      } else {
        // A probe that read nothing (MHz == 0) cannot call a sample throttled.
        const bool throttled = reading.MHz > 0 && reading.MHz < throttle_MHz;
        taken.push_back({reading.ms, reading.MHz, throttled});
        if (throttled) {
          std::this_thread::sleep_for(throttle_recovery_delay);
        } else {
          ++kept;
          noise.add(reading.ms);
        }
      }

      if (kept >= min_samples && noise.relative() <= options.target_rel_stdev) {
        out.noise_target_met = true;
        out.stop_reason = "noise target met";
        break;
      }
      if (kept >= max_samples) {
        out.stop_reason = "sample cap";
        break;
      }
      if (seconds_elapsed() >= options.max_seconds) {
        out.stop_reason = "time cap";
        break;
      }
    }

    out.kept_throttled_samples = kept < min_samples && kept < taken.size();
    double min_MHz = std::numeric_limits<double>::infinity();
    for (const Sample& sample : taken) {
      if (sample.MHz > 0) min_MHz = std::min(min_MHz, sample.MHz);
      if (sample.throttled && !out.kept_throttled_samples) {
        ++out.throttled_discarded;
        continue;
      }
      out.samples_ms.push_back(sample.ms);
      out.sm_clock_MHz_samples.push_back(sample.MHz);
    }
    out.sm_clock_MHz = median_of(out.sm_clock_MHz_samples);
    out.sm_clock_min_MHz = std::isfinite(min_MHz) ? min_MHz : 0;
    out.throttled = out.throttled_discarded > 0 || out.kept_throttled_samples ||
                    (out.sm_clock_MHz > 0 && out.sm_clock_MHz < throttle_MHz);
    return cudaSuccess;
  } catch (const CudaError& error) {
    return error.code();
  }
}

}  // namespace cfr::measure
