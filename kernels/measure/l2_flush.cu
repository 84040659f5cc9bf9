#include "kernels/measure/l2_flush.hpp"

#include <cstdint>

namespace cfr::measure {

namespace {

constexpr int read_threads = 256;

// Reads every 16 bytes of `words`; the buffer is zero, so the store that
// keeps the loads alive never runs and no line is left dirty.
__global__ void read_every_line(const uint4* words, std::size_t count, unsigned* sink) {
  unsigned folded = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint4 w = __ldcg(words + i);
    folded ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  if (folded != 0) *sink = folded;
}

}  // namespace

std::string_view to_string(L2FlushMode mode) {
  return mode == L2FlushMode::read ? "read" : "memset";
}

std::optional<L2FlushMode> parse_l2_flush_mode(std::string_view text) {
  if (text == "read") return L2FlushMode::read;
  if (text == "memset") return L2FlushMode::memset;
  return std::nullopt;
}

L2Flusher::L2Flusher(int device, L2FlushMode mode) : mode_(mode) {
  int l2_bytes = 0;
  int sm_count = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  read_blocks_ = 8 * sm_count;
  if (l2_bytes > 0) {
    buffer_ = DeviceBuffer(2 * static_cast<std::size_t>(l2_bytes));
    if (mode_ == L2FlushMode::read) {
      CFR_CUDA_CHECK(cudaMemset(buffer_.data(), 0, buffer_.bytes()));
      CFR_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
}

cudaError_t L2Flusher::flush(cudaStream_t stream) {
  if (buffer_.bytes() == 0) return cudaSuccess;
  if (mode_ == L2FlushMode::memset) {
    fill_ ^= 0x5a;
    return cudaMemsetAsync(buffer_.data(), fill_, buffer_.bytes(), stream);
  }
  auto* words = static_cast<const uint4*>(buffer_.data());
  read_every_line<<<read_blocks_, read_threads, 0, stream>>>(
      words, buffer_.bytes() / sizeof(uint4), static_cast<unsigned*>(buffer_.data()));
  return cudaGetLastError();
}

}  // namespace cfr::measure
