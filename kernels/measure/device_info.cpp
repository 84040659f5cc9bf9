#include "kernels/measure/device_info.hpp"

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <cuda_runtime_api.h>

#include "kernels/measure/cuda_error.hpp"

namespace cfr::measure {
namespace {

// 13000 -> "13.0"
std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// The NVIDIA kernel module's version, read without NVML. The file's first
// line reads "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  <date>"
// (the "Open Kernel Module" variant has one more word); the version is the
// first token after "Module". Empty when the file is absent or unexpected.
std::string kernel_module_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!file || !std::getline(file, line)) return {};
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (word == "Module") {
      std::string version;
      if (words >> version && version.find('.') != std::string::npos) return version;
      return {};
    }
  }
  return {};
}

int attribute(cudaDeviceAttr which, int device) {
  int value = 0;
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&value, which, device));
  return value;
}

}  // namespace

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error pending for the next caller
    return 0;
  }
  return count;
}

ComputeCapability compute_capability_of(int device) {
  return {attribute(cudaDevAttrComputeCapabilityMajor, device),
          attribute(cudaDevAttrComputeCapabilityMinor, device)};
}

DeviceInfo query_device(int index) {
  const int count = device_count();
  if (index < 0 || index >= count) {
    throw std::invalid_argument("device " + std::to_string(index) + " does not exist (" +
                                std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                                ")");
  }
  cudaDeviceProp properties{};
  CFR_CUDA_CHECK(cudaGetDeviceProperties(&properties, index));

  DeviceInfo info;
  info.index = index;
  info.name = properties.name;
  info.cc = std::to_string(properties.major) + "." + std::to_string(properties.minor);
  info.sm_count = properties.multiProcessorCount;
  info.l2_bytes = properties.l2CacheSize;
  info.memory_bytes = static_cast<long long>(properties.totalGlobalMem);
  // cudaDeviceProp lost clockRate and memoryClockRate in CUDA 13; the
  // attributes remain (both in kHz).
  info.clock_MHz = attribute(cudaDevAttrClockRate, index) / 1000.0;
  info.memory_clock_MHz = attribute(cudaDevAttrMemoryClockRate, index) / 1000.0;
  info.memory_bus_width_bits = properties.memoryBusWidth;

  int driver_version = 0;
  CFR_CUDA_CHECK(cudaDriverGetVersion(&driver_version));
  info.driver = cuda_version_string(driver_version);
  if (const std::string module = kernel_module_version(); !module.empty()) {
    info.driver += " (" + module + ")";
  }
  int runtime_version = 0;
  CFR_CUDA_CHECK(cudaRuntimeGetVersion(&runtime_version));
  info.runtime = cuda_version_string(runtime_version);

  std::array<char, 32> bus_id{};
  CFR_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), index));
  info.pci_bus_id = bus_id.data();
  return info;
}

}  // namespace cfr::measure
