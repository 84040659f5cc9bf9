#include "ceiling_choice.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "gpu_choice.hpp"
#include "measured_ceilings.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::app {

ChosenCeiling choose_ceiling(const GpuTable& table, const std::string& gpu, const std::string& mode,
                             const std::vector<DeviceRecord>& devices) {
  if (devices.empty()) throw std::runtime_error("no device to measure on");
  std::optional<LocalDevice> first;
  first = LocalDevice{devices.front().name, devices.front().cc};
  const GpuSpec& row = choose_gpu(table, gpu, first);

  ChosenCeiling chosen;
  if (mode == "datasheet") {
    chosen.ceiling = datasheet_ceiling(row, table.origin);
  } else {
    chosen.ceiling = measured_ceiling(mode, row, table.origin, devices.front().index);
  }

  bool all_match = true;
  for (const DeviceRecord& device : devices) {
    if (table.match_device(device.name, device.cc) != &row) {
      all_match = false;
      const std::string message = fmt::format(
          "ceiling '{}' ({}) is not the measuring device's: device {} is {} (cc {}); every "
          "fraction of roof compares this device with another GPU's ceiling",
          row.id, row.name, device.index, device.name, device.cc);
      chosen.warnings.push_back(message);
      chosen.reasons.push_back(message);
    }
  }
  chosen.ceiling.matches_device = all_match;
  return chosen;
}

}  // namespace cfr::app
