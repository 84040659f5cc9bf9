#pragma once

// wgmma (sm_90a): warpgroup-wide asynchronous MMA with fp32 accumulators.
// The shapes fa3_wgmma issues: m64n{128,176,192}k16 with A and B from shared
// memory (S = Q K^T over a K/V block of that many keys; fa3_backward.cuh also
// m64n64k16, plain and with both operands transposed), and m64n64k16 / m64n128k16 with A from
// registers (O += P V at d = 64 / 128, B = V read through its transpose bit). Operands are
// described by kernels/wgmma_layout.hpp; the ordering rules are the PTX ISA's: wgmma_fence() before
// the first wgmma and whenever registers it reads (accumulators, A) were written by other
// instructions; commit_group closes a batch; wait_group<n> leaves at most n batches in flight. The
// asm text must be one literal per shape and type, hence the macros. Device code, compiled only
// where __CUDA_ARCH_FEAT_SM90_ALL is defined.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/fa2_mma.cuh"
#include "kernels/wgmma_layout.hpp"

namespace cfr::kernels::wgmma {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int pending>
__device__ __forceinline__ void wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}

// Keeps the compiler from moving reads or writes of accumulator registers
// across a wgmma fence or wait: the asynchronous MMA owns them in between.
template <int count>
__device__ __forceinline__ void fence_operands(float (&d)[count]) {
#pragma unroll
  for (int i = 0; i < count; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The same for A operands in registers: pins their computation before the
// wgmma_fence() that follows (else the compiler may sink it past the fence,
// and ptxas then injects one of its own).
template <int steps>
__device__ __forceinline__ void fence_operands(std::uint32_t (&a)[steps][4]) {
#pragma unroll
  for (int step = 0; step < steps; ++step) {
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(a[step][r])::"memory");
  }
}

// clang-format off
#define CFR_WGMMA_RS_M64N64K16(TYPE) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

#define CFR_WGMMA_SS_M64N64K16(TYPE, TRANS) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, " TRANS ";\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
               : "l"(a), "l"(b), "r"(accumulate))

#define CFR_WGMMA_SS_M64N128K16(TYPE) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "l"(a), "l"(b), "r"(accumulate))

#define CFR_WGMMA_SS_M64N176K16(TYPE) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n176k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, p, 1, 1, 0, 0;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]) \
               : "l"(a), "l"(b), "r"(accumulate))

#define CFR_WGMMA_SS_M64N192K16(TYPE) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n192k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1, 0, 0;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]) \
               : "l"(a), "l"(b), "r"(accumulate))

#define CFR_WGMMA_RS_M64N128K16(TYPE) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
               "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " " \
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

// clang-format on

template <typename T>
inline constexpr bool is_bf16 = std::is_same_v<T, __nv_bfloat16>;

// d (+)= A B for a 64 x N tile, A and B both K-major in shared memory
// (descriptors a, b); accumulate == 0 overwrites d.
template <typename T, int n>
__device__ __forceinline__ void mma_ss(float (&d)[n / 2], std::uint64_t a, std::uint64_t b,
                                       int accumulate) {
  static_assert(n == 64 || n == 128 || n == 176 || n == 192);
  if constexpr (n == 64) {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_SS_M64N64K16("bf16", "0, 0");
    } else {
      CFR_WGMMA_SS_M64N64K16("f16", "0, 0");
    }
  } else if constexpr (n == 128) {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_SS_M64N128K16("bf16");
    } else {
      CFR_WGMMA_SS_M64N128K16("f16");
    }
  } else if constexpr (n == 176) {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_SS_M64N176K16("bf16");
    } else {
      CFR_WGMMA_SS_M64N176K16("f16");
    }
  } else {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_SS_M64N192K16("bf16");
    } else {
      CFR_WGMMA_SS_M64N192K16("f16");
    }
  }
}

// d (+)= A B for a 64 x 64 tile, A and B both MN-major in shared memory
// (both read through their transpose bits: dQ = dS K of fa3_backward.cuh,
// dS stored [keys][query rows], K [keys][d]); accumulate == 0 overwrites d.
template <typename T>
__device__ __forceinline__ void mma_ss_mn_major(float (&d)[32], std::uint64_t a, std::uint64_t b,
                                                int accumulate) {
  if constexpr (is_bf16<T>) {
    CFR_WGMMA_SS_M64N64K16("bf16", "1, 1");
  } else {
    CFR_WGMMA_SS_M64N64K16("f16", "1, 1");
  }
}

// d += A B for a 64 x N tile, A from registers (four 32-bit registers of
// two 16-bit values, a_fragment_position's layout), B MN-major in shared
// memory (transposed read).
template <typename T, int n>
__device__ __forceinline__ void mma_rs(float (&d)[n / 2], const std::uint32_t (&a)[4],
                                       std::uint64_t b, int accumulate) {
  static_assert(n == 64 || n == 128);
  if constexpr (n == 64) {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_RS_M64N64K16("bf16");
    } else {
      CFR_WGMMA_RS_M64N64K16("f16");
    }
  } else {
    if constexpr (is_bf16<T>) {
      CFR_WGMMA_RS_M64N128K16("bf16");
    } else {
      CFR_WGMMA_RS_M64N128K16("f16");
    }
  }
}

// acc (=) A B^T over `steps` K steps of 16, A and B K-major in shared memory
// (tiles of a_rows and b_rows rows as k_major_operand lays them out: S = Q K^T
// in fa3_wgmma, S^T = K Q^T and dP^T = V dO^T in fa3_backward); the first
// step overwrites acc. One descriptor an operand, each step's a constant
// further (k_major_step_offset), which costs fewer registers than a
// descriptor a step. Issued, not committed.
template <typename T, int n, int steps>
__device__ __forceinline__ void issue_k_major(float (&acc)[n / 2], std::uint32_t a_tile, int a_rows,
                                              std::uint32_t b_tile, int b_rows) {
  const std::uint64_t a = encode(k_major_operand(a_tile, a_rows, 0));
  const std::uint64_t b = encode(k_major_operand(b_tile, b_rows, 0));
#pragma unroll
  for (int step = 0; step < steps; ++step) {
    mma_ss<T, n>(acc, a + k_major_step_offset(a_rows, step), b + k_major_step_offset(b_rows, step),
                 step > 0 ? 1 : 0);
  }
}

// acc += A B over `steps` K steps of 16, A from registers (one set of four a
// step) and B MN-major in shared memory (a tile of b_rows rows): O += P V in
// fa3_wgmma, dV += P^T dO and dK += dS^T Q in fa3_backward. One descriptor,
// as issue_k_major. Issued, not committed.
template <typename T, int n, int steps>
__device__ __forceinline__ void issue_register_a(float (&acc)[n / 2],
                                                 const std::uint32_t (&a)[steps][4],
                                                 std::uint32_t b_tile, int b_rows) {
  const std::uint64_t b = encode(mn_major_operand(b_tile, b_rows, 0));
#pragma unroll
  for (int step = 0; step < steps; ++step) {
    mma_rs<T, n>(acc, a[step], b + mn_major_step_offset(step), 1);
  }
}

// The A operand of K step `step` (four registers) from the fp32 accumulator
// of a product it follows: the same thread holds every value it needs
// (p_source_index), so no shuffle: P from S, P^T from S^T, dS^T.
template <typename T, int count>
__device__ __forceinline__ void pack_a_step(const float (&acc)[count], int step,
                                            std::uint32_t (&a)[4]) {
#pragma unroll
  for (int reg = 0; reg < 4; ++reg) {
    a[reg] =
        fa2::pack_pair<T>(acc[p_source_index(step, reg, 0)], acc[p_source_index(step, reg, 1)]);
  }
}

#undef CFR_WGMMA_SS_M64N64K16
#undef CFR_WGMMA_SS_M64N128K16
#undef CFR_WGMMA_SS_M64N176K16
#undef CFR_WGMMA_SS_M64N192K16
#undef CFR_WGMMA_RS_M64N64K16
#undef CFR_WGMMA_RS_M64N128K16

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace cfr::kernels::wgmma
