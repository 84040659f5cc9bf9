// fp16 / bf16 tensor-core peaks, two ways:
//  - cuBLAS: cublasGemmEx, fp32 compute, square m = n = k, random inputs;
//  - mma.sync.aligned.m16n8k16 (fp32 accumulate) on register-resident
//    fragments: independent accumulator chains, no memory traffic, so it
//    measures the issue rate of the warp-level instruction. On Hopper that is
//    below the wgmma peak cuBLAS reaches; on Ampere they should agree.

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/ceilings/random_fill.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int mma_threads = 256;  // 8 warps
constexpr int mma_chains = 8;     // independent accumulators per warp
constexpr double mma_flop = 2.0 * 16 * 8 * 16;

void require_half_precision(DType dtype, const char* what) {
  if (dtype != DType::fp16 && dtype != DType::bf16) {
    throw std::invalid_argument(std::string(what) + " takes fp16 or bf16, not " +
                                std::string(to_string(dtype)));
  }
}

std::string tensor_figure(DType dtype, const char* how) {
  return std::string(to_string(dtype)) + "_tensor_" + how;
}

ComputeUnit tensor_unit(DType dtype) {
  return dtype == DType::bf16 ? ComputeUnit::bf16_tensor : ComputeUnit::fp16_tensor;
}

// Two packed 16-bit values, small and non-zero, different per lane.
__device__ std::uint32_t fragment_word(bool bf16, int lane, int k) {
  const float lo = 0.001f * static_cast<float>(lane + 1 + k);
  const float hi = -0.0005f * static_cast<float>(lane + 2 + k);
  std::uint32_t word = 0;
  if (bf16) {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(lo, hi);
    memcpy(&word, &pair, sizeof(word));
  } else {
    const __half2 pair = __floats2half2_rn(lo, hi);
    memcpy(&word, &pair, sizeof(word));
  }
  return word;
}

template <bool kBf16>
__device__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#else
  (void)d;
  (void)a;
  (void)b;
  __trap();  // built for an architecture without m16n8k16 (sm_80 or newer needed)
#endif
}

template <bool kBf16>
__global__ void __launch_bounds__(mma_threads)
    mma_chains_kernel(int iterations, float* sink, int write_sink) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  std::uint32_t a[4];
  std::uint32_t b[2];
  for (int k = 0; k < 4; ++k) a[k] = fragment_word(kBf16, lane, k);
  for (int k = 0; k < 2; ++k) b[k] = fragment_word(kBf16, lane, k + 4);
  float acc[mma_chains][4] = {};
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < mma_chains; ++c) mma_16816<kBf16>(acc[c], a, b);
  }
  float total = 0;
#pragma unroll
  for (int c = 0; c < mma_chains; ++c) total += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (write_sink != 0)
    sink[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = total;
}

}  // namespace

CeilingMeasurement measure_cublas_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                              int size, cudaStream_t stream,
                                              const measure::BoardEnergy* energy) {
  require_half_precision(dtype, "the cuBLAS tensor peak");
  if (size < 16) throw std::invalid_argument("the cuBLAS GEMM needs m = n = k >= 16");
  const auto n = static_cast<std::size_t>(size);
  const std::size_t bytes = n * n * 2;
  measure::DeviceBuffer a(bytes), b(bytes), c(bytes);
  CFR_CUDA_CHECK(detail::fill_random_values(a.data(), n * n, dtype, 11, stream));
  CFR_CUDA_CHECK(detail::fill_random_values(b.data(), n * n, dtype, 12, stream));
  CFR_CUDA_CHECK(detail::fill_random_values(c.data(), n * n, dtype, 13, stream));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));

  measure::CublasHandle handle;
  const measure::CublasLibrary& cublas = measure::cublas();  // open: a handle exists
  CFR_CUBLAS_CHECK(cublas.set_stream(handle, stream));
  const cudaDataType_t type = dtype == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const float alpha = 1.f;
  const float beta = 0.f;
  cublasStatus_t failure = CUBLAS_STATUS_SUCCESS;

  detail::FigureSpec spec;
  spec.figure = tensor_figure(dtype, "cublas");
  spec.unit = "TFLOP/s";
  spec.work_per_launch =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  spec.unit_scale = 1e12;
  spec.method = "cublasGemmEx, " + std::string(to_string(dtype)) +
                " in and out, CUBLAS_COMPUTE_32F, m = n = k = " + std::to_string(size) +
                ", column-major NN, inputs uniform in [-1, 1), hot; counts 2 m n k FLOP";
  spec.compute_unit = tensor_unit(dtype);
  CeilingMeasurement measurement = detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        const cublasStatus_t status =
            cublas.gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &alpha, a.data(), type,
                        size, b.data(), type, size, &beta, c.data(), type, size, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
        (void)s;  // the handle is bound to the timed stream
        if (status == CUBLAS_STATUS_SUCCESS) return cudaGetLastError();
        failure = status;
        return cudaErrorUnknown;
      },
      detail::hot(options), stream, energy);
  CFR_CUBLAS_CHECK(failure);
  return measurement;
}

CeilingMeasurement measure_mma_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                           int iterations, cudaStream_t stream,
                                           const measure::BoardEnergy* energy) {
  require_half_precision(dtype, "the mma tensor peak");
  if (iterations < 1) throw std::invalid_argument("the mma benchmark needs at least one iteration");
  const bool bf16 = dtype == DType::bf16;
  const void* kernel = bf16 ? reinterpret_cast<const void*>(mma_chains_kernel<true>)
                            : reinterpret_cast<const void*>(mma_chains_kernel<false>);
  const int blocks = detail::resident_blocks(kernel, mma_threads);
  measure::DeviceBuffer sink(static_cast<std::size_t>(blocks) * mma_threads * sizeof(float));
  const double warps = static_cast<double>(blocks) * (mma_threads / 32);

  detail::FigureSpec spec;
  spec.figure = tensor_figure(dtype, "mma");
  spec.unit = "TFLOP/s";
  spec.work_per_launch = warps * iterations * mma_chains * mma_flop;
  spec.unit_scale = 1e12;
  spec.method = "mma.sync.aligned.m16n8k16 " + std::string(to_string(dtype)) +
                " with fp32 accumulate on register fragments, " + std::to_string(mma_chains) +
                " independent chains x " + std::to_string(iterations) + " iterations per warp, " +
                std::to_string(blocks) + " blocks of " + std::to_string(mma_threads) +
                " threads, hot; counts 4096 FLOP per mma";
  spec.compute_unit = tensor_unit(dtype);
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        if (bf16) {
          mma_chains_kernel<true><<<blocks, mma_threads, 0, s>>>(iterations, sink.as<float>(), 0);
        } else {
          mma_chains_kernel<false><<<blocks, mma_threads, 0, s>>>(iterations, sink.as<float>(), 0);
        }
        return cudaGetLastError();
      },
      detail::hot(options), stream, energy);
}

}  // namespace cfr::ceilings
