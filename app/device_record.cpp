#include "device_record.hpp"

namespace cfr {

DeviceRecord device_record(const measure::DeviceInfo& info) {
  return {info.index,
          info.name,
          info.cc,
          info.sm_count,
          static_cast<double>(info.l2_bytes),
          static_cast<double>(info.memory_bytes),
          info.clock_MHz,
          info.memory_clock_MHz,
          info.driver,
          info.runtime,
          info.pci_bus_id};
}

}  // namespace cfr
