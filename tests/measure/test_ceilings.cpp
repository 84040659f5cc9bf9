// Pins that every ceiling micro-benchmark (kernels/ceilings/ceilings.hpp) runs
// on a small size and returns a positive median with its samples, unit and
// compute unit. The numbers themselves are checked on the device, not here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "kernels/ceilings/ceilings.hpp"
#include "kernels/measure/board_energy.hpp"
#include "kernels/measure/cuda_error.hpp"

using namespace cfr;
using namespace cfr::ceilings;

namespace {

measure::TimingOptions quick() {
  measure::TimingOptions options;
  options.warmup_runs = 1;
  options.min_samples = 3;
  options.max_samples = 50;
  options.max_seconds = 1;
  return options;
}

void check_figure(const CeilingMeasurement& m, const char* figure, const char* unit) {
  INFO(m.figure << ": " << m.value << " " << m.unit << " (" << m.method << ")");
  CHECK(m.figure == figure);
  CHECK(m.unit == unit);
  CHECK(m.value > 0);
  CHECK_FALSE(m.samples.empty());
  CHECK(m.samples.size() == m.timing.samples_ms.size());
  CHECK(std::all_of(m.samples.begin(), m.samples.end(), [](double v) { return v > 0; }));
  CHECK_FALSE(m.method.empty());
}

}  // namespace

TEST_CASE("each ceiling benchmark returns a positive figure on a small size", "[ceilings]") {
  measure::CudaStream stream;
  const auto options = quick();

  SECTION("dram") {
    const auto m = measure_dram_bandwidth(options, 64u << 20, stream);
    check_figure(m, "dram_bandwidth", "GB/s");
    CHECK_FALSE(m.compute_unit.has_value());
    CHECK(m.timing.l2_flush);
  }
  SECTION("dram, driver memcpy") {
    const auto m = measure_dram_memcpy_bandwidth(options, 64u << 20, stream);
    check_figure(m, "dram_bandwidth_memcpy", "GB/s");
    CHECK_FALSE(m.compute_unit.has_value());
  }
  SECTION("dram, read-only stream") {
    const auto m = measure_dram_read_bandwidth(options, 64u << 20, stream);
    check_figure(m, "dram_read_bandwidth", "GB/s");
    CHECK_FALSE(m.compute_unit.has_value());
    CHECK(m.timing.l2_flush);
    CHECK(m.method.find("counts bytes read") != std::string::npos);
  }
  SECTION("l2") {
    const auto m = measure_l2_bandwidth(options, 1u << 20, 8, stream);
    check_figure(m, "l2_bandwidth", "GB/s");
    CHECK_FALSE(m.timing.l2_flush);
  }
  SECTION("cublas fp16") {
    const auto m = measure_cublas_tensor_peak(DType::fp16, options, 512, stream);
    check_figure(m, "fp16_tensor_cublas", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::fp16_tensor);
  }
  SECTION("cublas bf16") {
    const auto m = measure_cublas_tensor_peak(DType::bf16, options, 512, stream);
    check_figure(m, "bf16_tensor_cublas", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::bf16_tensor);
  }
  SECTION("mma fp16") {
    const auto m = measure_mma_tensor_peak(DType::fp16, options, 64, stream);
    check_figure(m, "fp16_tensor_mma", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::fp16_tensor);
  }
  SECTION("mma bf16") {
    const auto m = measure_mma_tensor_peak(DType::bf16, options, 64, stream);
    check_figure(m, "bf16_tensor_mma", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::bf16_tensor);
  }
  SECTION("fp32 fma") {
    const auto m = measure_fp32_fma_peak(options, 256, stream);
    check_figure(m, "fp32_simt_fma", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::fp32_simt);
  }
  SECTION("shared memory") {
    const auto m = measure_shared_memory_bandwidth(options, 256, stream);
    check_figure(m, "shared_memory_bandwidth", "GB/s");
    CHECK_FALSE(m.compute_unit);
  }
  SECTION("fp16 hfma2") {
    const auto m = measure_fp16_hfma2_peak(options, 256, stream);
    check_figure(m, "fp16_simt_hfma2", "TFLOP/s");
    CHECK(m.compute_unit == ComputeUnit::fp16_simt);
  }
}

// On an sm_90a build and a compute capability 9.0 device (the H200 of
// device_run.sh): wgmma, the instruction cuBLAS's Hopper kernels issue, beats
// the warp-level mma.sync loop (at 595-650 TFLOP/s on the H200, issue 23);
// anywhere else the figure is skipped with its reason.
TEST_CASE("the wgmma loop outruns mma.sync where the GPU has it", "[ceilings]") {
  if (const auto reason = wgmma_unavailable(0)) {
    WARN("wgmma skipped: " << *reason);
    CHECK(reason->find("sm_90a") != std::string::npos);
    return;
  }
  measure::CudaStream stream;
  const auto wgmma = measure_wgmma_tensor_peak(DType::fp16, quick(), 2048, stream);
  const auto mma = measure_mma_tensor_peak(DType::fp16, quick(), 4096, stream);
  check_figure(wgmma, "fp16_tensor_wgmma", "TFLOP/s");
  INFO("wgmma " << wgmma.value << ", mma.sync " << mma.value << " TFLOP/s");
  CHECK(wgmma.value > mma.value);
  CHECK(wgmma.compute_unit == ComputeUnit::fp16_tensor);
  const auto bf16 = measure_wgmma_tensor_peak(DType::bf16, quick(), 256, stream);
  check_figure(bf16, "bf16_tensor_wgmma", "TFLOP/s");
}

TEST_CASE("the benchmarks reject sizes and dtypes they cannot run", "[ceilings]") {
  measure::CudaStream stream;
  CHECK_THROWS_AS(measure_mma_tensor_peak(DType::fp32, quick(), 64, stream), std::invalid_argument);
  CHECK_THROWS_AS(measure_wgmma_tensor_peak(DType::fp32, quick(), 64, stream),
                  std::invalid_argument);
  CHECK_THROWS_AS(measure_shared_memory_bandwidth(quick(), 0, stream), std::invalid_argument);
  CHECK_THROWS_AS(measure_cublas_tensor_peak(DType::fp32, quick(), 512, stream),
                  std::invalid_argument);
  CHECK_THROWS_AS(measure_l2_bandwidth(quick(), 1u << 20, 0, stream), std::invalid_argument);
  CHECK_THROWS_AS(measure_dram_bandwidth(quick(), 8, stream), std::invalid_argument);
  CHECK_THROWS_AS(measure_dram_read_bandwidth(quick(), (16u << 10) - 1, stream),
                  std::invalid_argument);
}

TEST_CASE("measure_ceilings runs every figure on device 0", "[ceilings]") {
  CeilingSizes sizes;
  sizes.dram_buffer_bytes = 64u << 20;
  sizes.l2_buffer_bytes = 1u << 20;
  sizes.l2_passes = 8;
  sizes.gemm_size = 512;
  sizes.mma_iterations = 64;
  sizes.fma_iterations = 256;
  sizes.wgmma_iterations = 64;
  sizes.shared_iterations = 256;
  const auto ceilings = measure_ceilings(0, quick(), sizes, false, true);
  // Ten figures and shared memory; the two wgmma ones where the device and build have sm_90a.
  REQUIRE(ceilings.size() == (wgmma_unavailable(0) ? 11u : 13u));
  CHECK(measure_ceilings(0, quick(), sizes).size() == 10u);  // without instruction_roofs
  for (const auto& m : ceilings) CHECK(m.value > 0);
  CHECK(dram_bandwidth_GBps(ceilings).has_value());
  const auto named = [&](const char* figure) {
    const auto it = std::find_if(ceilings.begin(), ceilings.end(),
                                 [&](const CeilingMeasurement& m) { return m.figure == figure; });
    REQUIRE(it != ceilings.end());
    return *it;
  };
  // The read stream reads one buffer of twice the copy's (the bytes a copy moves).
  CHECK(named("dram_read_bandwidth").method.find("128 MiB buffer") != std::string::npos);
  for (ComputeUnit unit : all_compute_units) CHECK(best_peak_TFLOPs(ceilings, unit).has_value());
  CHECK(*best_peak_TFLOPs(ceilings, ComputeUnit::fp16_tensor) >=
        named("fp16_tensor_mma").value);  // the max over cuBLAS and mma
  // Without `energy`, no figure measures it (and NVML is never opened).
  for (const auto& m : ceilings) CHECK_FALSE(m.energy.has_value());
}

// ceilings --energy's path through a figure, with a board whose energy is
// unavailable (no NVML needed): the figure keeps its timing and carries the
// board's reason and its work per launch, which the rate counts.
TEST_CASE("a figure measured with a board without energy carries the board's reason",
          "[ceilings]") {
  measure::CudaStream stream;
  measure::BoardEnergy board;
  board.unavailable = "NVML: no counter on this board";
  const auto m = measure_fp32_fma_peak(quick(), 256, stream, &board);
  check_figure(m, "fp32_simt_fma", "TFLOP/s");
  REQUIRE(m.energy.has_value());
  CHECK(m.energy->run.unavailable == "NVML: no counter on this board");
  CHECK(m.energy->run.readings.empty());
  // Each sample's rate is the work over its time: the same work per launch.
  CHECK(m.energy->work_per_launch > 0);
  CHECK(m.energy->work_per_launch / (m.timing.samples_ms[0] * 1e-3) / 1e12 == Approx(m.samples[0]));
  CHECK_FALSE(measure_fp32_fma_peak(quick(), 256, stream).energy.has_value());
}
