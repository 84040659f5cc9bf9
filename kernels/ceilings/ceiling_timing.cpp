#include "kernels/ceilings/ceiling_timing.hpp"

#include <algorithm>

#include "kernels/measure/board_energy.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "roofline/core/statistics.hpp"

namespace cfr::ceilings::detail {

CeilingMeasurement time_figure(const FigureSpec& spec,
                               const std::function<cudaError_t(cudaStream_t)>& launch,
                               const measure::TimingOptions& options, cudaStream_t stream,
                               const measure::BoardEnergy* energy) {
  CeilingMeasurement measurement;
  measurement.figure = spec.figure;
  measurement.unit = spec.unit;
  measurement.method = spec.method;
  measurement.compute_unit = spec.compute_unit;
  const cudaError_t status = measure::time_cold(launch, options, stream, measurement.timing);
  if (status != cudaSuccess) {
    const std::string call = "timing " + spec.figure;
    throw measure::CudaError(status, call, call + ": " + measure::cuda_error_text(status));
  }
  for (double ms : measurement.timing.samples_ms) {
    if (ms > 0) measurement.samples.push_back(spec.work_per_launch / (ms * 1e-3) / spec.unit_scale);
  }
  measurement.value = summarize(measurement.samples).median;
  if (energy != nullptr) {
    CeilingEnergy e;
    e.work_per_launch = spec.work_per_launch;
    const std::vector<double>& ms = measurement.timing.samples_ms;
    const double launch_ms = ms.empty() ? 1.0 : summarize(ms).median;
    e.run = measure::measure_board_energy(launch, launch_ms, *energy, {}, stream);
    measurement.energy = std::move(e);
  }
  return measurement;
}

measure::TimingOptions hot(measure::TimingOptions options) {
  options.flush_l2 = false;
  return options;
}

int resident_blocks(const void* kernel, int threads, std::size_t shared_bytes) {
  int device = 0;
  CFR_CUDA_CHECK(cudaGetDevice(&device));
  int sm_count = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  int per_sm = 0;
  CFR_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  return std::max(1, sm_count * std::max(per_sm, 1));
}

std::string mib(double bytes) {
  return std::to_string(static_cast<long long>(bytes / 1048576)) + " MiB";
}

std::string l2_state(const measure::TimingOptions& options) {
  if (!options.flush_l2) return "hot";
  return options.l2_flush_mode == measure::L2FlushMode::read
             ? "L2 emptied before each sample by a read of twice its size"
             : "L2 flushed before each sample by a memset of twice its size";
}

}  // namespace cfr::ceilings::detail
