#include "kernels/measure/energy_meter.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void pause(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

CounterPoller::CounterPoller(ReadCounter read) : read_(std::move(read)), start_(now_s()) {}

double CounterPoller::elapsed_s() const {
  return now_s() - start_;
}

std::optional<std::string> CounterPoller::read(bool keep_always) {
  OrReason<std::uint64_t> value = read_();
  const double t = elapsed_s();
  if (auto* why = std::get_if<std::string>(&value)) return std::move(*why);
  const std::uint64_t mJ = std::get<std::uint64_t>(value);
  // The first reading is the interval's zero of time.
  if (readings_.empty()) {
    start_ += t;
    readings_.push_back({0, mJ});
  } else if (keep_always || mJ != readings_.back().mJ) {
    readings_.push_back({t, mJ});
  }
  return std::nullopt;
}

std::optional<std::string> CounterPoller::poll() {
  return read(false);
}

std::optional<std::string> CounterPoller::finish() {
  return read(true);
}

namespace {

int changes_of(const std::vector<CounterReading>& readings) {
  return std::max(0, static_cast<int>(readings.size()) - 1);
}

// Polls until `done` or max_idle_s; the reason a read failed.
template <typename Done>
std::optional<std::string> poll_until(CounterPoller& poller, const EnergyMeterOptions& options,
                                      Done done) {
  while (!done() && poller.elapsed_s() < options.max_idle_s) {
    if (auto why = poller.poll()) return why;
    pause(options.poll_s);
  }
  return std::nullopt;
}

}  // namespace

IdleInterval measure_idle(const ReadCounter& read, const EnergyMeterOptions& options) {
  IdleInterval out;
  CounterPoller poller(read);
  auto why = poll_until(poller, options,
                        [&] { return changes_of(poller.readings()) > options.cadence_changes; });
  if (!why) why = poller.finish();
  if (why) {
    out.unavailable = "idle interval: " + *why;
    out.readings = poller.readings();
    return out;
  }
  OrReason<CounterCadence> cadence = counter_cadence(poller.readings());
  if (auto* stalled = std::get_if<std::string>(&cadence)) {
    out.unavailable = fmt::format("idle interval of {:.1f} s: {}", options.max_idle_s, *stalled);
    out.readings = poller.readings();
    return out;
  }
  const auto& r = poller.readings();
  const double watts =
      static_cast<double>(r.back().mJ - r.front().mJ) / 1000 / (r.back().t_s - r.front().t_s);
  out.run_seconds = seconds_for_rule(std::get<CounterCadence>(cadence), watts);
  why = poll_until(poller, options, [&] { return poller.elapsed_s() >= out.run_seconds; });
  if (!why) why = poller.finish();
  out.readings = poller.readings();
  if (why) {
    out.unavailable = "idle interval: " + *why;
  } else if (out.run_seconds > options.max_idle_s) {
    out.unavailable = fmt::format(
        "the energy counter needs runs of {:.1f} s, over the {:.1f} s "
        "allowed",
        out.run_seconds, options.max_idle_s);
  }
  return out;
}

namespace {

// Enqueues `count` launches; the first failing status.
cudaError_t enqueue(const std::function<cudaError_t(cudaStream_t)>& launch, std::int64_t count,
                    cudaStream_t stream) {
  for (std::int64_t i = 0; i < count; ++i) {
    if (const cudaError_t error = launch(stream); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

// Polls the counter, and probes at the times due, until `event` completes.
cudaError_t poll_while_busy(cudaEvent_t event, CounterPoller& poller, const ReadProbe& probe,
                            std::vector<double>& probe_times, const EnergyMeterOptions& options,
                            Energy& energy) {
  while (true) {
    const cudaError_t state = cudaEventQuery(event);
    if (state != cudaErrorNotReady) return state;
    if (auto why = poller.poll(); why && energy.unavailable.empty()) energy.unavailable = *why;
    if (!probe_times.empty() && poller.elapsed_s() >= probe_times.front()) {
      energy.probes.push_back(probe(poller.elapsed_s()));
      probe_times.erase(probe_times.begin());
    }
    pause(options.poll_s);
  }
}

// The run itself, between two events that let the host poll while the GPU
// works through a batch.
cudaError_t run_batches(const std::function<cudaError_t(cudaStream_t)>& launch, double launch_ms,
                        double seconds, const ReadCounter& read, const ReadProbe& probe,
                        const EnergyMeterOptions& options, cudaStream_t stream,
                        const CudaEvent (&events)[2], Energy& energy) {
  const auto batch = static_cast<std::int64_t>(std::max(1.0, std::ceil(10.0 / launch_ms)));
  std::vector<double> probe_times;
  for (int i = 1; i <= options.probes_between; ++i) {
    probe_times.push_back(seconds * i / (options.probes_between + 1));
  }
  CounterPoller poller(read);
  if (auto why = poller.poll()) energy.unavailable = *why;
  energy.probes.push_back(probe(0));
  cudaError_t status = enqueue(launch, batch, stream);
  if (status == cudaSuccess) status = cudaEventRecord(events[0], stream);
  energy.launches = batch;
  for (int current = 0; status == cudaSuccess && poller.elapsed_s() < seconds; current ^= 1) {
    status = enqueue(launch, batch, stream);
    if (status == cudaSuccess) status = cudaEventRecord(events[current ^ 1], stream);
    if (status != cudaSuccess) break;
    energy.launches += batch;
    status = poll_while_busy(events[current], poller, probe, probe_times, options, energy);
  }
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (auto why = poller.finish(); why && energy.unavailable.empty()) energy.unavailable = *why;
  energy.probes.push_back(probe(poller.elapsed_s()));
  energy.readings = poller.readings();
  return status;
}

}  // namespace

cudaError_t measure_energy_run(const std::function<cudaError_t(cudaStream_t)>& launch,
                               double launch_ms, double seconds, const ReadCounter& read,
                               const ReadProbe& probe, const EnergyMeterOptions& options,
                               cudaStream_t stream, Energy& energy) {
  energy.counter = "nvmlDeviceGetTotalEnergyConsumption";
  CFR_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
  try {
    const CudaEvent events[2];
    return run_batches(launch, launch_ms, seconds, read, probe, options, stream, events, energy);
  } catch (const CudaError& error) {
    return error.code();
  }
}

}  // namespace cfr::measure
