#pragma once

#include "kernels/measure/device_info.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

// The report's record of a device, from what the CUDA runtime says about it.
DeviceRecord device_record(const measure::DeviceInfo& info);

}  // namespace cfr
