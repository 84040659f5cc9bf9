#include "kernels/measure/stream_blocker.hpp"

#include <atomic>

#include "kernels/measure/device_timers.cuh"

namespace cfr::measure {
namespace {

__global__ void spin_until_released(const volatile int* release, volatile int* timed_out,
                                    unsigned long long timeout_ns) {
  const unsigned long long start = registers::global_timer_ns();
  while (*release == 0) {
    if (registers::global_timer_ns() - start > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

}  // namespace

StreamBlocker::StreamBlocker(double timeout_ms) : flags_(2 * sizeof(int)), timeout_ms_(timeout_ms) {
  flags_.host<volatile int>()[0] = 1;
  flags_.host<volatile int>()[1] = 0;
  // Load the module now: with lazy loading, a first launch made while another
  // kernel spins could otherwise wait on the loader.
  cudaFuncAttributes attributes;
  CFR_CUDA_CHECK(cudaFuncGetAttributes(&attributes, spin_until_released));
}

cudaError_t StreamBlocker::block(cudaStream_t stream) {
  volatile int* flags = flags_.host<volatile int>();
  flags[0] = 0;
  flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const auto timeout_ns = static_cast<unsigned long long>(timeout_ms_ * 1e6);
  spin_until_released<<<1, 1, 0, stream>>>(flags_.device<const volatile int>(),
                                           flags_.device<volatile int>() + 1, timeout_ns);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) flags[0] = 1;
  return status;
}

void StreamBlocker::release() noexcept {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  flags_.host<volatile int>()[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool StreamBlocker::timed_out() const noexcept {
  return flags_.host<volatile int>()[1] != 0;
}

}  // namespace cfr::measure
