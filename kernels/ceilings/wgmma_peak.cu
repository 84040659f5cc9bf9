// Dense wgmma throughput (sm_90a only): each warpgroup issues
// wgmma.mma_async.sync.aligned.m64n256k16 with fp32 accumulators, A (64 x 16)
// and B (16 x 256) both read from shared memory through matrix descriptors,
// four per batch into one accumulator tile (the k-blocks of a GEMM main loop,
// as CUTLASS's sm90 mainloop issues them), one batch kept in flight
// (wgmma.wait_group 1). Two warpgroups per CTA, one CTA per SM: 128 fp32
// accumulators a thread leave no room for a second tile. Nothing is read from
// global memory, so it measures the instruction's issue rate, the roof of a
// kernel built on wgmma (docs/model.md §8.3).
//
// The operands are small non-zero values in the no-swizzle ("interleave")
// layout: core matrices of 8 rows x 16 bytes, 128 bytes each, the two along
// K 128 bytes apart (leading byte offset) and consecutive row groups 256
// bytes apart (stride byte offset); the descriptor's fields, per the PTX ISA
// ("Matrix Descriptor Format"): start address >> 4 in bits 0-13, leading
// byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, swizzle 0 in
// 62-63. The values are not checked: the result is discarded.
//
// Built only where gpu_archs names an sm_90a target (kernels/ceilings/
// meson.build defines CFR_WGMMA_BUILT); elsewhere the figure is skipped with
// wgmma_unavailable()'s reason.

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/ceilings/ceiling_timing.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::ceilings {
namespace {

constexpr int warpgroup_threads = 128;
constexpr int wgmma_warpgroups = 2;
constexpr int wgmma_threads = warpgroup_threads * wgmma_warpgroups;
constexpr int wgmma_per_batch = 4;
constexpr int tile_m = 64, tile_n = 256, tile_k = 16;
constexpr double wgmma_flop = 2.0 * tile_m * tile_n * tile_k;  // 524,288

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ std::uint64_t smem_descriptor(const void* tile) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(tile));
  constexpr std::uint64_t leading_bytes = 128;  // the next core matrix along K
  constexpr std::uint64_t stride_bytes = 256;   // the next 8-row group
  return ((address & 0x3FFFF) >> 4) | ((leading_bytes >> 4) << 16) | ((stride_bytes >> 4) << 32);
}

// One wgmma of element TYPE ("f16", "bf16"), as a macro: the asm text must
// be one literal, and the two types differ only in it.
#define CFR_WGMMA_M64N256K16(TYPE)                                                                 \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                                 \
      " "                                                                                          \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "          \
      "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, "      \
      "%35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, "      \
      "%52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, "      \
      "%69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "      \
      "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, "         \
      "%102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, "       \
      "%116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},\n"                 \
      "%128, %129, p, 1, 1, 0, 0;\n}\n"                                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])         \
      : "l"(a), "l"(b), "r"(1));

template <bool kBf16>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a,
                                                 std::uint64_t b) {
  if constexpr (kBf16) {
    CFR_WGMMA_M64N256K16("bf16");
  } else {
    CFR_WGMMA_M64N256K16("f16");
  }
}
#endif

template <bool kBf16>
__global__ void __launch_bounds__(wgmma_threads, 1)
    wgmma_chain_kernel(int iterations, float* sink, int write_sink) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Element = std::conditional_t<kBf16, __nv_bfloat16, __half>;
  constexpr int a_halves = tile_m * tile_k;  // 2 KiB
  constexpr int b_halves = tile_n * tile_k;  // 8 KiB
  __shared__ __align__(128) Element a_tile[a_halves];
  __shared__ __align__(128) Element b_tile[b_halves];
  for (int i = static_cast<int>(threadIdx.x); i < b_halves; i += wgmma_threads) {
    const float value = 0.001f * static_cast<float>((i % 13) + 1);
    if (i < a_halves) a_tile[i] = Element(value);
    b_tile[i] = Element(-value);
  }
  // Ordinary stores that the tensor cores read next: the async proxy's fence.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const std::uint64_t a = smem_descriptor(a_tile);
  const std::uint64_t b = smem_descriptor(b_tile);
  float d[128] = {};
  for (int it = 0; it < iterations; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < wgmma_per_batch; ++k) wgmma_m64n256k16<kBf16>(d, a, b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float total = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) total += d[i];
  if (write_sink != 0)
    sink[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = total;
#else
  (void)iterations;
  (void)sink;
  (void)write_sink;
  __trap();  // no sm_90a code in this build: wgmma_unavailable() keeps it from running
#endif
}

}  // namespace

std::optional<std::string> wgmma_unavailable(int device) {
#if !defined(CFR_WGMMA_BUILT)
  (void)device;
  return std::string("this build has no sm_90a code (gpu_archs names no 90a target)");
#else
  int major = 0;
  int minor = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0) {
    return "wgmma needs sm_90a (compute capability 9.0); device " + std::to_string(device) +
           " is " + std::to_string(major) + "." + std::to_string(minor);
  }
  return std::nullopt;
#endif
}

CeilingMeasurement measure_wgmma_tensor_peak(DType dtype, const measure::TimingOptions& options,
                                             int iterations, cudaStream_t stream,
                                             const measure::BoardEnergy* energy) {
  if (dtype != DType::fp16 && dtype != DType::bf16) {
    throw std::invalid_argument("the wgmma tensor peak takes fp16 or bf16");
  }
  if (iterations < 1) throw std::invalid_argument("the wgmma loop needs at least one iteration");
  const bool bf16 = dtype == DType::bf16;
  const void* kernel = bf16 ? reinterpret_cast<const void*>(wgmma_chain_kernel<true>)
                            : reinterpret_cast<const void*>(wgmma_chain_kernel<false>);
  const int blocks = detail::resident_blocks(kernel, wgmma_threads);
  measure::DeviceBuffer sink(static_cast<std::size_t>(blocks) * wgmma_threads * sizeof(float));
  detail::FigureSpec spec;
  spec.figure = std::string(to_string(dtype)) + "_tensor_wgmma";
  spec.unit = "TFLOP/s";
  spec.unit_scale = 1e12;
  spec.work_per_launch =
      static_cast<double>(blocks) * wgmma_warpgroups * iterations * wgmma_per_batch * wgmma_flop;
  spec.method = "wgmma.mma_async m64n256k16 " + std::string(to_string(dtype)) +
                " with fp32 accumulate, A and B from shared memory (descriptors, no swizzle), " +
                std::to_string(wgmma_per_batch) + " per batch x " + std::to_string(iterations) +
                " batches per warpgroup, one batch in flight, " + std::to_string(blocks) +
                " blocks of " + std::to_string(wgmma_warpgroups) +
                " warpgroups, hot; counts 524288 FLOP per wgmma";
  spec.compute_unit = dtype == DType::bf16 ? ComputeUnit::bf16_tensor : ComputeUnit::fp16_tensor;
  return detail::time_figure(
      spec,
      [&](cudaStream_t s) {
        if (bf16) {
          wgmma_chain_kernel<true>
              <<<blocks, wgmma_threads, 0, s>>>(iterations, sink.as<float>(), 0);
        } else {
          wgmma_chain_kernel<false>
              <<<blocks, wgmma_threads, 0, s>>>(iterations, sink.as<float>(), 0);
        }
        return cudaGetLastError();
      },
      detail::hot(options), stream, energy);
}

}  // namespace cfr::ceilings
