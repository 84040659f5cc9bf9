#include "kernels/measure/clock_probe.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "kernels/measure/device_timers.cuh"

namespace cfr::measure {
namespace {

// One thread per block; one block per SM is requested (the hardware may put
// two on one SM, the host matches start and stop by SM id).
__global__ void stamp_clocks(ClockStamp* stamps, unsigned generation) {
  // Wait for a tick of %globaltimer, then read both counters back to back.
  constexpr int max_spins = 1 << 16;  // a timer that never ticks must not hang the probe
  const unsigned long long first = registers::global_timer_ns();
  unsigned long long now = first;
  long long cycles = clock64();
  for (int spin = 0; spin < max_spins && now == first; ++spin) {
    now = registers::global_timer_ns();
    cycles = clock64();
  }
  ClockStamp stamp;
  stamp.generation = generation;
  stamp.sm = registers::sm_id();
  stamp.global_ns = now;
  stamp.cycles = cycles;
  stamps[blockIdx.x] = stamp;
  __threadfence_system();
}

__global__ void stay_busy(unsigned long long busy_ns, int* sink) {
  const unsigned long long start = registers::global_timer_ns();
  float x = static_cast<float>(threadIdx.x);
  while (registers::global_timer_ns() - start < busy_ns) {
#pragma unroll 16
    for (int i = 0; i < 256; ++i) x = fmaf(x, 0.999f, 0.001f);
  }
  if (x == -1.f) *sink = 1;  // never true; keeps the loop's work alive
}

}  // namespace

ClockProbe::ClockProbe(int device) {
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&blocks_, cudaDevAttrMultiProcessorCount, device));
  blocks_ = std::max(blocks_, 1);
  stamps_ = MappedHostBuffer(2 * static_cast<std::size_t>(blocks_) * sizeof(ClockStamp));
  std::fill_n(stamps_.host<ClockStamp>(), 2 * blocks_, ClockStamp{0, 0, 0, 0});
  cudaFuncAttributes attributes;  // load the module now (lazy loading)
  CFR_CUDA_CHECK(cudaFuncGetAttributes(&attributes, stamp_clocks));
}

cudaError_t ClockProbe::start(cudaStream_t stream) {
  ++generation_;
  if (generation_ == 0) ++generation_;  // 0 marks "never written"
  stamp_clocks<<<blocks_, 1, 0, stream>>>(stamps_.device<ClockStamp>(), generation_);
  return cudaGetLastError();
}

cudaError_t ClockProbe::stop(cudaStream_t stream) {
  stamp_clocks<<<blocks_, 1, 0, stream>>>(stamps_.device<ClockStamp>() + blocks_, generation_);
  return cudaGetLastError();
}

double ClockProbe::MHz() const {
  if (generation_ == 0) return 0;  // never started
  const auto read = [this](int index) {
    const volatile ClockStamp& stamp = stamps_.host<volatile ClockStamp>()[index];
    return ClockStamp{stamp.generation, stamp.sm, stamp.global_ns, stamp.cycles};
  };
  std::map<std::uint32_t, ClockStamp> first_start;
  for (int b = 0; b < blocks_; ++b) {
    const ClockStamp stamp = read(b);
    if (stamp.generation == generation_) first_start.emplace(stamp.sm, stamp);
  }
  std::vector<double> per_sm;
  for (int b = blocks_; b < 2 * blocks_; ++b) {
    const ClockStamp stop = read(b);
    if (stop.generation != generation_) continue;
    const auto start = first_start.find(stop.sm);
    if (start == first_start.end()) continue;
    const ClockStamp first = start->second;
    first_start.erase(start);  // one reading per SM
    if (stop.global_ns <= first.global_ns || stop.cycles <= first.cycles) continue;
    const auto ns = static_cast<double>(stop.global_ns - first.global_ns);
    const auto cycles = static_cast<double>(stop.cycles - first.cycles);
    per_sm.push_back(cycles / ns * 1000.0);
  }
  if (per_sm.empty()) return 0;
  const auto middle = per_sm.begin() + static_cast<std::ptrdiff_t>(per_sm.size() / 2);
  std::nth_element(per_sm.begin(), middle, per_sm.end());
  if (per_sm.size() % 2 == 1) return *middle;
  const double upper = *middle;
  const double lower = *std::max_element(per_sm.begin(), middle);
  return (lower + upper) / 2;
}

cudaError_t measure_sm_clock(cudaStream_t stream, double busy_ms, double& MHz) {
  MHz = 0;
  try {
    int device = 0;
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetDevice(&device));
    int sm_count = 0;
    CFR_CUDA_CHECK_NOEXCEPT(
        cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
    ClockProbe probe(device);
    DeviceBuffer sink(sizeof(int));
    CFR_CUDA_CHECK_NOEXCEPT(probe.start(stream));
    stay_busy<<<std::max(sm_count, 1), 128, 0, stream>>>(
        static_cast<unsigned long long>(busy_ms * 1e6), sink.as<int>());
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());
    CFR_CUDA_CHECK_NOEXCEPT(probe.stop(stream));
    CFR_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));
    MHz = probe.MHz();
    return cudaSuccess;
  } catch (const CudaError& error) {
    return error.code();
  }
}

}  // namespace cfr::measure
