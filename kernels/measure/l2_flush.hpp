#pragma once

// Empties the L2 cache of the timed work's data before each cold sample, as
// nvbench's l2flush does: a memset over a buffer twice the L2 size evicts every
// line the previous launch left behind.

#include <cstddef>

#include <cuda_runtime_api.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {

class L2Flusher {
 public:
  // Allocates 2 x the L2 size of `device` (the current device must be `device`
  // when flush() runs). Throws CudaError when the allocation fails.
  explicit L2Flusher(int device);

  // Enqueues the memset on `stream`; returns its status.
  cudaError_t flush(cudaStream_t stream);

  std::size_t buffer_bytes() const noexcept { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  int fill_ = 0;  // alternates, so no flush writes the same bytes as the previous one
};

}  // namespace cfr::measure
