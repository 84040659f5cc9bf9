#include "kernels/measure/l2_flush.hpp"

namespace cfr::measure {

L2Flusher::L2Flusher(int device) {
  int l2_bytes = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  if (l2_bytes > 0) buffer_ = DeviceBuffer(2 * static_cast<std::size_t>(l2_bytes));
}

cudaError_t L2Flusher::flush(cudaStream_t stream) {
  if (buffer_.bytes() == 0) return cudaSuccess;
  fill_ ^= 0x5a;
  return cudaMemsetAsync(buffer_.data(), fill_, buffer_.bytes(), stream);
}

}  // namespace cfr::measure
