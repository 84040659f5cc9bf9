#pragma once

// cp.async (sm_80+): global -> shared copies that bypass registers, so the
// next K/V tile streams in while the tensor cores work on the current one.

#include <cstdint>

namespace cfr::kernels {

// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0:
// nothing is read from `src`, which must still be a valid address).
__device__ __forceinline__ void copy_16_bytes_async_shared(std::uint32_t dst, const void* src,
                                                           bool valid);

__device__ __forceinline__ void copy_16_bytes_async(void* dst, const void* src, bool valid) {
  copy_16_bytes_async_shared(static_cast<std::uint32_t>(__cvta_generic_to_shared(dst)), src, valid);
}

// The same for a destination already given as a shared-window address.
__device__ __forceinline__ void copy_16_bytes_async_shared(std::uint32_t dst, const void* src,
                                                           bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}

// Copies 4 bytes through L1 (cp.async.ca: 4 and 8 bytes have no .cg form),
// or writes 4 zero bytes when `valid` is false, as above.
__device__ __forceinline__ void copy_4_bytes_async_shared(std::uint32_t dst, const void* src,
                                                          bool valid) {
  const int src_bytes = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void commit_async_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `pending` committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

// Copies rows [first_row, first_row + rows) of one head's [seq_len, head_dim]
// matrix into shared memory (row stride ld elements) without conversion;
// rows at or past seq_len are zero-filled and never read.
template <typename T, int rows, int head_dim, int ld, int threads>
__device__ __forceinline__ void copy_tile_async(T* __restrict__ dst, const T* __restrict__ head,
                                                int first_row, int seq_len) {
  constexpr int per_chunk = 16 / static_cast<int>(sizeof(T));
  constexpr int chunks_per_row = head_dim / per_chunk;
  constexpr int chunks = rows * chunks_per_row;
  static_assert(head_dim % per_chunk == 0 && ld % per_chunk == 0);
#pragma unroll
  for (int chunk = static_cast<int>(threadIdx.x); chunk < chunks; chunk += threads) {
    const int row = chunk / chunks_per_row;
    const int col = (chunk % chunks_per_row) * per_chunk;
    const bool valid = first_row + row < seq_len;
    const T* src =
        valid ? head + static_cast<std::int64_t>(first_row + row) * head_dim + col : head;
    copy_16_bytes_async(dst + row * ld + col, src, valid);
  }
}

}  // namespace cfr::kernels
