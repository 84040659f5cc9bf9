#include "kernels/measure/board_sensors.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace cfr::measure {

BoardSensors::BoardSensors(const NvmlLibrary& library, const std::string& pci_bus_id)
    : nvml_(library) {
  if (const NvmlReturn status = nvml_.init(); status != nvml_success) {
    throw std::runtime_error("NVML: nvmlInit_v2: " + nvml_error_text(nvml_, status));
  }
  if (const NvmlReturn status = nvml_.device_by_pci_bus_id(pci_bus_id.c_str(), &device_);
      status != nvml_success) {
    (void)nvml_.shutdown();  // the failure above is the one reported
    throw std::runtime_error(fmt::format("NVML: no device at PCI bus id {}: {}", pci_bus_id,
                                         nvml_error_text(nvml_, status)));
  }
}

BoardSensors::~BoardSensors() {
  (void)nvml_.shutdown();  // nothing is left to measure; a failure changes nothing
}

OrReason<std::uint64_t> BoardSensors::energy_mJ() const {
  unsigned long long mJ = 0;
  if (const NvmlReturn status = nvml_.total_energy(device_, &mJ); status != nvml_success) {
    return "nvmlDeviceGetTotalEnergyConsumption: " + nvml_error_text(nvml_, status);
  }
  return static_cast<std::uint64_t>(mJ);
}

EnergyProbe BoardSensors::probe(double t_s) const {
  unsigned int clock = 0, temperature = 0, power_mW = 0;
  EnergyProbe p;
  p.t_s = t_s;
  if (nvml_.clock_info(device_, nvml_clock_sm, &clock) == nvml_success) p.sm_clock_MHz = clock;
  if (nvml_.temperature(device_, nvml_temperature_gpu, &temperature) == nvml_success) {
    p.temperature_C = temperature;
  }
  if (nvml_.power_usage(device_, &power_mW) == nvml_success) p.power_W = power_mW / 1000.0;
  return p;
}

}  // namespace cfr::measure
