#pragma once

// Rules 1 and 2 of the error rule (roofline/core/errors.hpp) for CUDA and
// cuBLAS calls, one macro family, and RAII owners for every CUDA resource the
// measuring code holds (no naked cudaFree anywhere):
//
//   CFR_CUDA_CHECK(expr)           throws CudaError naming the call and its call site
//   CFR_CUDA_CHECK_NOEXCEPT(expr)  returns the failing cudaError_t from the enclosing
//                                  function, which returns cudaError_t and throws nothing
//   CFR_CUBLAS_CHECK(expr)         throws CudaError for a cublasStatus_t
//
// Host-only header: plain C++ translation units may include it.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/measure/cublas_library.hpp"

namespace cfr::measure {

// A failed CUDA or cuBLAS call. what() is one line: the call, where it was
// made and what the runtime said.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, std::string_view call, const std::string& message)
      : std::runtime_error(message), code_(code), call_(call) {}
  // cudaErrorUnknown for cuBLAS failures, which have no cudaError_t.
  cudaError_t code() const noexcept { return code_; }
  // The call as written at the call site ("cudaMalloc(&data_, bytes)"), or
  // what failed when no single call did ("timing fp16_tensor").
  const std::string& call() const noexcept { return call_; }

 private:
  cudaError_t code_;
  std::string call_;
};

// "NAME (description)" of a CUDA error, as every message shows it.
inline std::string cuda_error_text(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ')';
}

inline std::string describe_cuda_error(cudaError_t code, std::string_view expression,
                                       std::string_view file, int line) {
  std::string message{expression};
  message += " failed at ";
  message += file;
  message += ':';
  message += std::to_string(line);
  message += ": ";
  message += cuda_error_text(code);
  return message;
}

inline void check_cuda(cudaError_t code, std::string_view expression, std::string_view file,
                       int line) {
  if (code != cudaSuccess) {
    throw CudaError(code, expression, describe_cuda_error(code, expression, file, line));
  }
}

inline void check_cublas(cublasStatus_t status, std::string_view expression, std::string_view file,
                         int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string message{expression};
  message += " failed at ";
  message += file;
  message += ':';
  message += std::to_string(line);
  message += ": ";
  // A status other than success came from the library, so it is open.
  message += cublas().status_name(status);
  message += " (";
  message += cublas().status_string(status);
  message += ')';
  throw CudaError(cudaErrorUnknown, expression, message);
}

}  // namespace cfr::measure

#define CFR_CUDA_CHECK(expr) ::cfr::measure::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CFR_CUBLAS_CHECK(expr) ::cfr::measure::check_cublas((expr), #expr, __FILE__, __LINE__)
#define CFR_CUDA_CHECK_NOEXCEPT(expr)             \
  do {                                            \
    const cudaError_t cfr_check_status_ = (expr); \
    if (cfr_check_status_ != cudaSuccess) {       \
      return cfr_check_status_;                   \
    }                                             \
  } while (false)

namespace cfr::measure {

// Owns a cudaMalloc allocation. Move-only; an empty buffer holds nullptr.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) CFR_CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void* data() const noexcept { return data_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  void reset() noexcept {
    if (data_ != nullptr) (void)cudaFree(data_);  // errors here would be a prior sticky error
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A launch's workspace as LaunchContext asks (kernels/attention_api.hpp):
// zero-filled, on the stream the launch runs on (a legacy-stream memset is
// unordered against a non-blocking stream).
inline DeviceBuffer zeroed_workspace(std::size_t bytes, cudaStream_t stream) {
  DeviceBuffer workspace(bytes);
  if (bytes > 0) CFR_CUDA_CHECK(cudaMemsetAsync(workspace.data(), 0, bytes, stream));
  return workspace;
}

// Page-locked host memory mapped into the device address space: the device
// writes it (or polls it) while the host reads (or writes) it. Move-only.
class MappedHostBuffer {
 public:
  MappedHostBuffer() = default;
  explicit MappedHostBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    CFR_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    const cudaError_t status = cudaHostGetDevicePointer(&device_, host_, 0);
    if (status != cudaSuccess) {
      (void)cudaFreeHost(host_);
      host_ = nullptr;
      CFR_CUDA_CHECK(status);
    }
  }
  MappedHostBuffer(MappedHostBuffer&& other) noexcept
      : host_(std::exchange(other.host_, nullptr)),
        device_(std::exchange(other.device_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  MappedHostBuffer& operator=(MappedHostBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      host_ = std::exchange(other.host_, nullptr);
      device_ = std::exchange(other.device_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;
  ~MappedHostBuffer() { reset(); }

  template <typename T>
  T* host() const noexcept {
    return static_cast<T*>(host_);
  }
  template <typename T>
  T* device() const noexcept {
    return static_cast<T*>(device_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  void reset() noexcept {
    if (host_ != nullptr) (void)cudaFreeHost(host_);
    host_ = device_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owns one CUDA-library handle (a pointer type) and destroys it with
// `destroy`, whose status is ignored: destruction runs on unwinding paths.
template <typename Handle, auto destroy>
class OwnedHandle {
 public:
  OwnedHandle(OwnedHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() { reset(); }

  Handle get() const noexcept { return handle_; }
  operator Handle() const noexcept { return handle_; }  // NOLINT: meant to be implicit

 protected:
  explicit OwnedHandle(Handle handle) noexcept : handle_(handle) {}

 private:
  void reset() noexcept {
    if (handle_ != nullptr) (void)destroy(handle_);
    handle_ = nullptr;
  }
  Handle handle_ = nullptr;
};

// A non-blocking stream (no implicit synchronization with the legacy default
// stream) of the current device.
class CudaStream : public OwnedHandle<cudaStream_t, &cudaStreamDestroy> {
 public:
  CudaStream() : OwnedHandle(create()) {}

 private:
  static cudaStream_t create() {
    cudaStream_t stream = nullptr;
    CFR_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
  }
};

// A timing event (cudaEventDefault: records timestamps).
class CudaEvent : public OwnedHandle<cudaEvent_t, &cudaEventDestroy> {
 public:
  CudaEvent() : OwnedHandle(create()) {}

 private:
  static cudaEvent_t create() {
    cudaEvent_t event = nullptr;
    CFR_CUDA_CHECK(cudaEventCreate(&event));
    return event;
  }
};

inline cublasStatus_t destroy_cublas_handle(cublasHandle_t handle) {
  return cublas().destroy(handle);
}

// Opens cuBLAS (cublas_library.hpp) at the first handle; throws
// std::runtime_error naming the library when it cannot be opened.
class CublasHandle : public OwnedHandle<cublasHandle_t, &destroy_cublas_handle> {
 public:
  CublasHandle() : OwnedHandle(create()) {}

 private:
  static cublasHandle_t create() {
    cublasHandle_t handle = nullptr;
    CFR_CUBLAS_CHECK(cublas().create(&handle));
    return handle;
  }
};

// Makes `device` current for the scope and restores the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    CFR_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) CFR_CUDA_CHECK(cudaSetDevice(device));
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice() { (void)cudaSetDevice(previous_); }

 private:
  int previous_ = 0;
};

}  // namespace cfr::measure
