#pragma once

// The empirical roofline of the local GPU: memory bandwidths and compute
// peaks measured with our own micro-benchmarks and cuBLAS, each timed through
// the cold timer and reported as the median of its per-sample rates.
// Host-only header: plain C++ callers (app/) include it.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/measure/cold_timer.hpp"
#include "roofline/core/compute_unit.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/report/ceiling_energy.hpp"

namespace cfr::measure {
struct BoardEnergy;  // kernels/measure/board_energy.hpp
}

namespace cfr::ceilings {

struct CeilingMeasurement {
  // "dram_bandwidth", "dram_bandwidth_memcpy", "dram_read_bandwidth", "l2_bandwidth",
  // "fp16_tensor_cublas",
  // "bf16_tensor_cublas", "fp16_tensor_mma", "bf16_tensor_mma", "fp32_simt_fma", "fp16_simt_hfma2",
  // "shared_memory_bandwidth", "fp16_tensor_wgmma", "bf16_tensor_wgmma" (sm_90a only)
  std::string figure;
  std::string unit;             // "GB/s" (1e9 bytes/s) or "TFLOP/s" (1e12 FLOP/s)
  double value = 0;             // median of samples
  std::vector<double> samples;  // one rate per kept timing sample, in `unit`
  std::string method;           // one sentence: kernel, sizes, what is counted
  // The roof this figure bounds; empty for the bandwidths.
  std::optional<ComputeUnit> compute_unit;
  measure::TimingResult timing;  // the raw samples, clocks and stop reason
  // With a board (`ceilings --energy`): the board's energy around a run of
  // the timed launch, back to back, and the work of one launch
  // (ceiling_energy.hpp); its figures are derived by the caller.
  std::optional<CeilingEnergy> energy;
};

// Problem sizes. The defaults are the full measurement; tests pass small ones.
struct CeilingSizes {
  // Bytes of each of the two copy buffers; the read stream reads one buffer of
  // twice this, the same bytes a copy moves. 0: max(2 GiB, 8 x L2), capped at
  // a quarter of the free memory.
  std::size_t dram_buffer_bytes = 0;
  // Bytes of each of the two buffers; 0: L2 / 8, so the working set is L2 / 4.
  std::size_t l2_buffer_bytes = 0;
  // Copies per launch of the L2 benchmark; 0: enough for about 4 GiB of traffic.
  int l2_passes = 0;
  int gemm_size = 8192;          // m = n = k of the cuBLAS GEMM
  int mma_iterations = 4096;     // per warp, each issuing 8 independent mma.sync
  int fma_iterations = 16384;    // per thread, each issuing 8 independent FMAs
  int wgmma_iterations = 2048;   // per warpgroup, each a batch of 4 wgmma
  int shared_iterations = 8192;  // per thread, each 4 loads of 16 bytes
};

// Every figure of `device`, in the order of CeilingMeasurement::figure's list.
// The shared-memory and wgmma figures only with `instruction_roofs` (their
// kernels have not yet run on a device: opt-in until they have), and the
// wgmma ones only where wgmma_unavailable(device) is empty (the reason is
// printed to stderr otherwise).
// L2 and compute figures are timed hot (no L2 flush) whatever
// options.flush_l2 says; DRAM follows options. With `energy`, the board's
// sensors are opened through NVML (loaded only then) and its quiet interval
// measured before the first figure, and every figure gets its energy (or the
// board's reason it has none). Throws measure::CudaError.
std::vector<CeilingMeasurement> measure_ceilings(int device, const measure::TimingOptions& options,
                                                 const CeilingSizes& sizes = {},
                                                 bool energy = false,
                                                 bool instruction_roofs = false);

// One figure each, on the current device and `stream`. Throw
// measure::CudaError on a CUDA or cuBLAS failure, std::invalid_argument on a
// bad size or dtype. With an `energy` board, the figure also gets its energy
// (after its timing, the same launch back to back for the board's run length).
CeilingMeasurement measure_dram_bandwidth(const measure::TimingOptions& options,
                                          std::size_t buffer_bytes, cudaStream_t stream,
                                          const measure::BoardEnergy* energy = nullptr);
// The driver's device-to-device copy over the same kind of buffers: what the
// copy kernel is compared with (the roof stays the copy kernel's figure).
CeilingMeasurement measure_dram_memcpy_bandwidth(const measure::TimingOptions& options,
                                                 std::size_t buffer_bytes, cudaStream_t stream,
                                                 const measure::BoardEnergy* energy = nullptr);
// Bytes read by a read-only stream (read_bandwidth.cu): the slope a kernel
// that only streams its inputs is judged on. buffer_bytes: at least 16 KiB.
CeilingMeasurement measure_dram_read_bandwidth(const measure::TimingOptions& options,
                                               std::size_t buffer_bytes, cudaStream_t stream,
                                               const measure::BoardEnergy* energy = nullptr);
CeilingMeasurement measure_l2_bandwidth(const measure::TimingOptions& options,
                                        std::size_t buffer_bytes, int passes, cudaStream_t stream,
                                        const measure::BoardEnergy* energy = nullptr);
// dtype: fp16 or bf16.
CeilingMeasurement measure_cublas_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                              int size, cudaStream_t stream,
                                              const measure::BoardEnergy* energy = nullptr);
CeilingMeasurement measure_mma_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                           int iterations, cudaStream_t stream,
                                           const measure::BoardEnergy* energy = nullptr);
// wgmma.mma_async m64n256k16 from shared memory (wgmma_peak.cu); run only
// where wgmma_unavailable(device) is empty: an sm_90a build on a compute
// capability 9.0 device. dtype: fp16 or bf16.
CeilingMeasurement measure_wgmma_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                             int iterations, cudaStream_t stream,
                                             const measure::BoardEnergy* energy = nullptr);
// Why `device` cannot run the wgmma figure; empty when it can.
std::optional<std::string> wgmma_unavailable(int device);
// 16-byte ld.shared streams on every SM (shared_bandwidth.cu), in GB/s.
CeilingMeasurement measure_shared_memory_bandwidth(const measure::TimingOptions& options,
                                                   int iterations, cudaStream_t stream,
                                                   const measure::BoardEnergy* energy = nullptr);
CeilingMeasurement measure_fp32_fma_peak(const measure::TimingOptions& options, int iterations,
                                         cudaStream_t stream,
                                         const measure::BoardEnergy* energy = nullptr);
CeilingMeasurement measure_fp16_hfma2_peak(const measure::TimingOptions& options, int iterations,
                                           cudaStream_t stream,
                                           const measure::BoardEnergy* energy = nullptr);

// The highest measured peak of `unit` over its methods (cuBLAS, mma, ...).
std::optional<double> best_peak_TFLOPs(const std::vector<CeilingMeasurement>& ceilings,
                                       ComputeUnit unit);
// The "dram_bandwidth" figure.
std::optional<double> dram_bandwidth_GBps(const std::vector<CeilingMeasurement>& ceilings);

}  // namespace cfr::ceilings
