#pragma once

// One board's NVML sensors for `sweep --energy`: the total-energy counter,
// and the SM clock, temperature and power reading its joules ran at. The
// CUDA device is found in NVML by its PCI bus id (the device record's), as
// the two number devices differently. Host-only.

#include <cstdint>
#include <string>

#include "kernels/measure/nvml_library.hpp"
#include "roofline/core/errors.hpp"
#include "roofline/report/row_energy.hpp"

namespace cfr::measure {

class BoardSensors {
 public:
  // nvmlInit_v2, then the device of `pci_bus_id`; throws std::runtime_error
  // naming the call that failed and NVML's words (rule 1: the caller turns it
  // into each row's energy.unavailable).
  BoardSensors(const NvmlLibrary& library, const std::string& pci_bus_id);
  ~BoardSensors();
  BoardSensors(const BoardSensors&) = delete;
  BoardSensors& operator=(const BoardSensors&) = delete;

  // The counter (mJ since the driver loaded), or why it cannot be read: a
  // board before Volta says NVML_ERROR_NOT_SUPPORTED.
  OrReason<std::uint64_t> energy_mJ() const;

  // The SM clock, GPU temperature and power reading now, stamped `t_s`; a
  // value NVML will not give is 0 (a query whose failure only means there is
  // nothing: roofline/core/errors.hpp).
  EnergyProbe probe(double t_s) const;

 private:
  const NvmlLibrary& nvml_;
  NvmlDevice device_ = nullptr;
};

}  // namespace cfr::measure
