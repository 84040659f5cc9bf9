#pragma once

// What the report records about a CUDA device. Host-only header.

#include <string>

#include "roofline/core/compute_capability.hpp"

namespace cfr::measure {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string cc;  // "9.0"
  int sm_count = 0;
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  double clock_MHz = 0;  // max SM clock (cudaDevAttrClockRate)
  double memory_clock_MHz = 0;
  int memory_bus_width_bits = 0;
  // "13.0" from cudaDriverGetVersion, followed by the kernel module's version
  // from /proc/driver/nvidia/version where readable: "13.0 (570.124.06)".
  std::string driver;
  std::string runtime;     // "13.0" from cudaRuntimeGetVersion
  std::string pci_bus_id;  // "0000:19:00.0"
};

// Number of CUDA devices; 0 when there is no device or no usable driver.
// Never throws.
int device_count();

// Throws std::invalid_argument for an index outside [0, device_count()), and
// CudaError when a query fails.
DeviceInfo query_device(int index);

// The device's compute capability alone; throws CudaError when the query fails.
ComputeCapability compute_capability_of(int device);

}  // namespace cfr::measure
