#pragma once

// Device scratch owned for a scope and ordered on one stream
// (cudaMallocAsync / cudaFreeAsync): a helper that needs temporary device
// memory neither synchronizes the device nor leaks on an early return.
// Host-only header.

#include <cstddef>

#include <cuda_runtime_api.h>

namespace cfr::kernels {

class StreamOrderedBuffer {
 public:
  StreamOrderedBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    status_ = cudaMallocAsync(&data_, bytes, stream);
    if (status_ != cudaSuccess) data_ = nullptr;
  }
  StreamOrderedBuffer(const StreamOrderedBuffer&) = delete;
  StreamOrderedBuffer& operator=(const StreamOrderedBuffer&) = delete;
  ~StreamOrderedBuffer() {
    if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);  // a failure here is already sticky
  }

  // cudaSuccess, or why the allocation failed (data() is then null).
  cudaError_t status() const noexcept { return status_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
  cudaError_t status_ = cudaSuccess;
};

}  // namespace cfr::kernels
