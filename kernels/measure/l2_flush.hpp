#pragma once

// Empties the L2 cache of the timed work's data before each cold sample. Two
// ways, both over a buffer twice the L2 size:
// - read (the default): a kernel reads every line of the buffer, so the L2 is
//   left holding clean lines that the timed launch evicts for free. This is
//   the state Nsight Compute's `--cache-control all` gives a profiled launch.
// - memset: nvbench's l2flush. The L2 is left full of dirty lines, and the
//   timed launch pays for writing them back to DRAM (8-10 us on every decode
//   launch past the L2 on the H200: docs/perf-notes.md, "A flush that leaves
//   no debt").

#include <cstddef>
#include <optional>
#include <string_view>

#include <cuda_runtime_api.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {

enum class L2FlushMode { read, memset };

std::string_view to_string(L2FlushMode mode);
std::optional<L2FlushMode> parse_l2_flush_mode(std::string_view text);

class L2Flusher {
 public:
  // Allocates 2 x the L2 size of `device` (the current device must be `device`
  // when flush() runs). Throws CudaError when the allocation fails.
  explicit L2Flusher(int device, L2FlushMode mode = L2FlushMode::read);

  // Enqueues the read or the memset on `stream`; returns its status.
  cudaError_t flush(cudaStream_t stream);

  std::size_t buffer_bytes() const noexcept { return buffer_.bytes(); }
  L2FlushMode mode() const noexcept { return mode_; }

 private:
  DeviceBuffer buffer_;
  L2FlushMode mode_;
  int read_blocks_ = 0;
  int fill_ = 0;  // memset: alternates, so no flush writes the same bytes as the previous one
};

}  // namespace cfr::measure
