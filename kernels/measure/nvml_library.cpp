#include "kernels/measure/nvml_library.hpp"

#include "kernels/measure/dl_library.hpp"

namespace cfr::measure {

std::string nvml_soname() {
  return "libnvidia-ml.so.1";
}

NvmlLibrary open_nvml(const std::string& library) {
  void* handle = open_library("NVML", library);
  NvmlLibrary out;
  resolve_symbol(handle, "NVML", library, "nvmlInit_v2", out.init);
  resolve_symbol(handle, "NVML", library, "nvmlShutdown", out.shutdown);
  resolve_symbol(handle, "NVML", library, "nvmlErrorString", out.error_string);
  resolve_symbol(handle, "NVML", library, "nvmlDeviceGetHandleByPciBusId_v2",
                 out.device_by_pci_bus_id);
  resolve_symbol(handle, "NVML", library, "nvmlDeviceGetTotalEnergyConsumption", out.total_energy);
  resolve_symbol(handle, "NVML", library, "nvmlDeviceGetPowerUsage", out.power_usage);
  resolve_symbol(handle, "NVML", library, "nvmlDeviceGetClockInfo", out.clock_info);
  resolve_symbol(handle, "NVML", library, "nvmlDeviceGetTemperature", out.temperature);
  return out;
}

const NvmlLibrary& nvml() {
  // A static initializer that throws leaves it uninitialized: the next call
  // tries again.
  static const NvmlLibrary library = open_nvml(nvml_soname());
  return library;
}

std::string nvml_error_text(const NvmlLibrary& library, NvmlReturn status) {
  const char* text = library.error_string(status);
  return text != nullptr ? std::string(text) : "NVML error " + std::to_string(status);
}

}  // namespace cfr::measure
