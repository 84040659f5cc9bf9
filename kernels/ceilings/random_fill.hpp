#pragma once

// Random inputs for the ceiling benchmarks: the method forbids timing on
// zeros (a GEMM on zeros has been seen to run 13% faster). Internal to
// kernels/ceilings.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "roofline/core/dtype.hpp"

namespace cfr::ceilings::detail {

// `bytes` (a multiple of 4) of hashed 32-bit words.
cudaError_t fill_random_words(void* data, std::size_t bytes, std::uint32_t seed,
                              cudaStream_t stream);

// `count` elements of `dtype`, uniform in [-1, 1).
cudaError_t fill_random_values(void* data, std::size_t count, DType dtype, std::uint32_t seed,
                               cudaStream_t stream);

}  // namespace cfr::ceilings::detail
