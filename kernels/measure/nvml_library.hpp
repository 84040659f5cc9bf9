#pragma once

// NVML, opened with dlopen by the commands that measure energy (sweep
// --energy), as cuBLAS is (cublas_library.hpp): a command that does not
// measure energy neither needs the driver's libnvidia-ml nor loads it.
//
// The toolkit ships no nvml.h (it comes with the driver's development
// files), so the few types and values the tool uses are declared here, as
// nvml.h declares them; they are part of NVML's stable C ABI.
//
// Host-only header: plain C++ translation units may include it.

#include <string>

namespace cfr::measure {

// nvmlReturn_t; the values named are those the tool tells apart.
using NvmlReturn = int;
inline constexpr NvmlReturn nvml_success = 0;        // NVML_SUCCESS
inline constexpr NvmlReturn nvml_not_supported = 3;  // NVML_ERROR_NOT_SUPPORTED
// nvmlDevice_t: an opaque handle.
using NvmlDevice = struct nvmlDevice_st*;
// nvmlClockType_t's NVML_CLOCK_SM; nvmlTemperatureSensors_t's NVML_TEMPERATURE_GPU.
inline constexpr int nvml_clock_sm = 1;
inline constexpr int nvml_temperature_gpu = 0;

// The entry points the tool calls, none of them null.
struct NvmlLibrary {
  NvmlReturn (*init)() = nullptr;      // nvmlInit_v2
  NvmlReturn (*shutdown)() = nullptr;  // nvmlShutdown
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*device_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;  // _v2
  // Millijoules since the driver loaded (Volta and newer).
  NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;       // milliwatts
  NvmlReturn (*clock_info)(NvmlDevice, int, unsigned int*) = nullptr;   // MHz
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;  // degrees C
};

// The driver's soname: "libnvidia-ml.so.1".
std::string nvml_soname();

// Opens `library` (a soname or a path) and resolves every entry point, or
// throws std::runtime_error with one line naming the library and what dlopen
// or dlsym said. The library stays open for the life of the process.
NvmlLibrary open_nvml(const std::string& library);

// nvml_soname() opened once, at the first call. A failed open throws (as
// open_nvml does) and is tried again at the next call.
const NvmlLibrary& nvml();

// "NVML_ERROR_NOT_SUPPORTED"-like words for a status: the library's own.
std::string nvml_error_text(const NvmlLibrary& library, NvmlReturn status);

}  // namespace cfr::measure
