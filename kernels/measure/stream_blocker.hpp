#pragma once

// Holds a stream still while the host enqueues the timed work, as nvbench's
// blocking_kernel does: a one-thread kernel spins on a flag in mapped host
// memory, so the start event, the launch and the stop event all sit in the
// queue before any of them runs, and host-side launch overhead stays out of
// the measured interval.
//
// A launch that waits on the host (cudaStreamSynchronize, a blocking memcpy)
// would deadlock behind the spinning kernel; the kernel therefore gives up
// after `timeout_ms` and reports it, and the caller stops blocking.

#include <cuda_runtime_api.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {

class StreamBlocker {
 public:
  static constexpr double default_timeout_ms = 5000;

  explicit StreamBlocker(double timeout_ms = default_timeout_ms);

  // Enqueues the spinning kernel on `stream`. Call release() afterwards, on
  // every path (the destructor does not).
  cudaError_t block(cudaStream_t stream);
  // Lets the spinning kernel finish. Safe to call when nothing is blocked.
  void release() noexcept;
  // After the stream has synchronized: whether the kernel gave up waiting.
  bool timed_out() const noexcept;

 private:
  MappedHostBuffer flags_;  // [0] release flag (host writes), [1] timed-out flag (device writes)
  double timeout_ms_;
};

// Releases a blocker when it goes out of scope (every return path of a sample).
class BlockerRelease {
 public:
  explicit BlockerRelease(StreamBlocker& blocker) : blocker_(blocker) {}
  BlockerRelease(const BlockerRelease&) = delete;
  BlockerRelease& operator=(const BlockerRelease&) = delete;
  ~BlockerRelease() { blocker_.release(); }

 private:
  StreamBlocker& blocker_;
};

}  // namespace cfr::measure
