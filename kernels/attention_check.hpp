#pragma once

// Correctness checking of attention outputs, shared by the GPU tests and the
// sweep (which checks every timed configuration): seeded random inputs,
// poisoned outputs, and the comparison of an output in its dtype with the
// fp32 reference. Host-only interface; no test framework needed.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/attention_api.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/core/output_check.hpp"

namespace cfr::kernels {

// The comparison's result and the rule that judges it are host-only and
// shared with the peers' import (roofline/core/output_check.hpp).
using cfr::CheckResult;
using cfr::passes;
using cfr::Tolerance;
using cfr::tolerance_for;

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

// dst [heads, count, width] = the rows `rows` (`count` sorted indices on
// the device) of src [heads, rows_per_head, width], element for element in
// `dtype`: the rows of an output a sub-sampled check compares
// (tiled_reference.hpp computes the reference of just those).
cudaError_t gather_rows(const void* src, void* dst, DType dtype, std::size_t heads,
                        int rows_per_head, const int* rows, int count, int width,
                        cudaStream_t stream);

// A device copy of `values` (a page table, a sample's row indices);
// synchronizes `stream`, so `values` may go once it returns. Throws
// measure::CudaError.
measure::DeviceBuffer ints_on_device(const std::vector<int>& values, cudaStream_t stream);

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

// A paged copy of a contiguous K/V cache, as a serving engine lays it out:
// the pages of each sequence in the order shuffled_page_table(seed) gives,
// K and V scattered into them. The rows of a last page past kv_len hold
// `unused_rows` in every byte (0, or 0xFF: NaN, as `poison`), and are never
// read by a kernel that passes its check.
struct PagedKv {
  measure::DeviceBuffer table, k, v;
  int pages_per_sequence = 0;

  // `io` with its K and V read through the pages.
  void point(ForwardBuffers& io) const;
};

// The paged copy of `k` and `v` (contiguous [batch, kv_heads, kv_len,
// head_dim] of `shape`, which must have a page size); throws
// measure::CudaError. Synchronizes `stream`.
PagedKv page_kv(const AttentionShape& shape, const void* k, const void* v, std::uint64_t seed,
                unsigned char unused_rows, cudaStream_t stream);

}  // namespace cfr::kernels
