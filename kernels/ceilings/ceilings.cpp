#include "kernels/ceilings/ceilings.hpp"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>

#include "kernels/measure/board_energy.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"

namespace cfr::ceilings {
namespace {

constexpr std::size_t GiB = std::size_t{1} << 30;

std::size_t default_dram_buffer_bytes(std::size_t l2_bytes) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  CFR_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t wanted = std::max(2 * GiB, 8 * l2_bytes);
  return std::min(wanted, free_bytes / 4);
}

int default_l2_passes(std::size_t buffer_bytes) {
  const std::size_t per_pass = 2 * std::max<std::size_t>(buffer_bytes, 16);
  return static_cast<int>(std::clamp<std::size_t>(4 * GiB / per_pass, 1, 1 << 20));
}

}  // namespace

std::vector<CeilingMeasurement> measure_ceilings(int device, const measure::TimingOptions& options,
                                                 const CeilingSizes& sizes, bool energy,
                                                 bool instruction_roofs) {
  measure::ScopedDevice scoped(device);
  measure::CudaStream stream;
  int l2 = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const auto l2_bytes = static_cast<std::size_t>(l2);

  const std::size_t dram_bytes =
      sizes.dram_buffer_bytes > 0 ? sizes.dram_buffer_bytes : default_dram_buffer_bytes(l2_bytes);
  const std::size_t l2_buffer_bytes =
      sizes.l2_buffer_bytes > 0 ? sizes.l2_buffer_bytes : std::max<std::size_t>(l2_bytes / 8, 16);
  const int l2_passes = sizes.l2_passes > 0 ? sizes.l2_passes : default_l2_passes(l2_buffer_bytes);

  // The board's quiet interval, before any figure has run.
  std::optional<measure::BoardEnergy> board;
  if (energy) board = measure::open_board_energy(measure::query_device(device).pci_bus_id, {});
  const measure::BoardEnergy* b = board ? &*board : nullptr;

  std::vector<CeilingMeasurement> ceilings;
  ceilings.push_back(measure_dram_bandwidth(options, dram_bytes, stream, b));
  ceilings.push_back(measure_dram_memcpy_bandwidth(options, dram_bytes, stream, b));
  ceilings.push_back(measure_dram_read_bandwidth(options, 2 * dram_bytes, stream, b));
  ceilings.push_back(measure_l2_bandwidth(options, l2_buffer_bytes, l2_passes, stream, b));
  ceilings.push_back(measure_cublas_tensor_peak(DType::fp16, options, sizes.gemm_size, stream, b));
  ceilings.push_back(measure_cublas_tensor_peak(DType::bf16, options, sizes.gemm_size, stream, b));
  ceilings.push_back(
      measure_mma_tensor_peak(DType::fp16, options, sizes.mma_iterations, stream, b));
  ceilings.push_back(
      measure_mma_tensor_peak(DType::bf16, options, sizes.mma_iterations, stream, b));
  ceilings.push_back(measure_fp32_fma_peak(options, sizes.fma_iterations, stream, b));
  ceilings.push_back(measure_fp16_hfma2_peak(options, sizes.fma_iterations, stream, b));
  if (!instruction_roofs) return ceilings;
  ceilings.push_back(measure_shared_memory_bandwidth(options, sizes.shared_iterations, stream, b));
  if (const auto reason = wgmma_unavailable(device)) {
    std::cerr << "ceilings: fp16_tensor_wgmma and bf16_tensor_wgmma skipped: " << *reason << "\n";
  } else {
    for (DType dtype : {DType::fp16, DType::bf16}) {
      ceilings.push_back(
          measure_wgmma_tensor_peak(dtype, options, sizes.wgmma_iterations, stream, b));
    }
  }
  return ceilings;
}

std::optional<double> best_peak_TFLOPs(const std::vector<CeilingMeasurement>& ceilings,
                                       ComputeUnit unit) {
  std::optional<double> best;
  for (const CeilingMeasurement& ceiling : ceilings) {
    if (ceiling.compute_unit != unit || ceiling.value <= 0) continue;
    if (!best || ceiling.value > *best) best = ceiling.value;
  }
  return best;
}

std::optional<double> dram_bandwidth_GBps(const std::vector<CeilingMeasurement>& ceilings) {
  for (const CeilingMeasurement& ceiling : ceilings) {
    if (ceiling.figure == "dram_bandwidth" && ceiling.value > 0) return ceiling.value;
  }
  return std::nullopt;
}

}  // namespace cfr::ceilings
