#pragma once

// Correctness checking of attention outputs, shared by the GPU tests and the
// sweep (which checks every timed configuration): seeded random inputs,
// poisoned outputs, and the comparison of an output in its dtype with the
// fp32 reference. Host-only interface; no test framework needed.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "roofline/core/dtype.hpp"

namespace cfr::kernels {

// A reference that is identically zero (dQ and dK when seq_len = 1: one key,
// so dS = P (dP - D) = 0) has no scale of its own; its errors are then
// absolute, as if the scale were 1 (the inputs are O(1)).
struct CheckResult {
  double rel_l2_err = 0;   // ||out - ref||_2 / ||ref||_2; inf if !all_finite
  double max_abs_err = 0;  // max |out - ref| over finite outputs
  double ref_l2 = 0;       // ||ref||_2; 0: rel_l2_err is the absolute ||out - ref||_2
  double ref_max_abs = 0;  // max |ref|
  bool all_finite = true;  // no NaN or Inf left in out
  std::size_t count = 0;

  // The scale max_abs_err is judged against: max |ref|, or 1 for a zero reference.
  double scale() const { return ref_max_abs > 0 ? ref_max_abs : 1.0; }
};

// What a kernel must meet on each output tensor, by I/O dtype:
//   rel_l2_err <= rel_l2  and  max_abs_err <= max_abs_relative * scale().
// The kernels accumulate in fp32 and read exactly the inputs the reference
// reads, so the error is dominated by rounding in the I/O dtype: the output
// itself (relative 2^-11 for fp16, 2^-8 for bf16), P rounded before the P V
// product (fa1_wmma, naive) and S stored in the dtype (naive, the largest
// error: three roundings). rel_l2 bounds are 5-10x the unit roundoff; max_abs
// leaves room for the worst element. fp32 only sees summation-order
// differences (~1e-6), so 1e-4 still catches any indexing or masking error.
struct Tolerance {
  double rel_l2 = 0;
  double max_abs_relative = 0;
};

constexpr Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::fp16: return {5e-3, 2e-2};
    case DType::bf16: return {2e-2, 8e-2};
    case DType::fp32: return {1e-4, 1e-3};
  }
  return {};
}

inline bool passes(const CheckResult& result, const Tolerance& tolerance) {
  return result.all_finite && result.rel_l2_err <= tolerance.rel_l2 &&
         result.max_abs_err <= tolerance.max_abs_relative * result.scale();
}

enum class Distribution {
  uniform,  // [-1, 1)
  normal,   // mean 0, standard deviation 1
};

// `count` elements of `dtype`, drawn from `distribution` by a counter-based
// hash of (seed, index): the same seed gives the same tensor on any device.
cudaError_t fill_random(void* data, std::size_t count, DType dtype, std::uint64_t seed,
                        Distribution distribution, cudaStream_t stream);

// 0xFF in every byte: NaN in fp16, bf16 and fp32, so an element a kernel
// forgets to write fails the check.
cudaError_t poison(void* data, std::size_t bytes, cudaStream_t stream);

// dst[i] = src[i] rounded to `dtype` (e.g. the reference O as a backward input).
cudaError_t convert_from_fp32(const float* src, void* dst, std::size_t count, DType dtype,
                              cudaStream_t stream);

// Compares `count` elements of `out` (in `dtype`) with the fp32 `ref` on the
// device; synchronizes `stream` and fills `result`.
cudaError_t compare_with_reference(const void* out, DType dtype, const float* ref,
                                   std::size_t count, cudaStream_t stream, CheckResult& result);

// A paged K/V cache: the page indices of each sequence, pages_per_sequence
// per batch entry, every page of the pool used once and in shuffled order
// (as a serving engine's allocator leaves them), from `seed`.
std::vector<int> shuffled_page_table(int batch, int pages_per_sequence, std::uint64_t seed);

// dst (pages [pages, kv_heads, page_size, d]) = src (contiguous [batch,
// kv_heads, kv_len, d]) through the page table, element for element; a last
// page's rows past kv_len are left as they were. `table` is on the device.
cudaError_t scatter_to_pages(const void* src, void* dst, const int* table, int batch, int kv_heads,
                             int kv_len, int head_dim, int page_size, int pages_per_sequence,
                             DType dtype, cudaStream_t stream);

}  // namespace cfr::kernels
