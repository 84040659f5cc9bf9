#pragma once

// What a launcher needs to know of the device it launches on (the current
// one): its SM count, which plans fa2_decode's splits, its compute
// capability, which picks a kernel's config where the catalog gives newer
// GPUs another (fa2_mma at d = 128), and its L2 size, which sizes
// fa3_wgmma's head groups (the figure a sweep's L2 model records), and its
// memory, which bounds a paged cache's rows (fa2_decode). Read once per
// device. Internal to kernels/.

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "roofline/core/compute_capability.hpp"

namespace cfr::kernels {

struct CurrentDevice {
  int sm_count = 1;
  ComputeCapability cc{};
  double l2_bytes = 0;
  double memory_bytes = 0;  // global memory
};

// The current device's figures; {1 SM, cc 0.0} where the runtime cannot say
// (a launch on such a device fails on its own).
inline CurrentDevice current_device() {
  static std::mutex mutex;
  static std::vector<CurrentDevice> known;
  static std::vector<bool> read;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0) return {};
  const std::lock_guard lock(mutex);
  const auto index = static_cast<std::size_t>(device);
  if (known.size() <= index) {
    known.resize(index + 1);
    read.resize(index + 1, false);
  }
  if (!read[index]) {
    int sms = 0, major = 0, minor = 0, l2 = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device) == cudaSuccess) {
      known[index] = {sms, {major, minor}, static_cast<double>(l2)};
    }
    // Apart: a device whose memory cannot be read keeps the figures above
    // (0 here: fa2_decode then refuses its 32-bit paged rows).
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      known[index].memory_bytes = static_cast<double>(total_bytes);
    }
    read[index] = true;
  }
  return known[index];
}

}  // namespace cfr::kernels
