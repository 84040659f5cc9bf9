// Pins roofline/report/report.hpp's device_of: which device record a row ran on.
#include <catch2/catch.hpp>

#include "roofline/report/report.hpp"

using namespace cfr;

TEST_CASE("a row's device record is the one with the row's device index") {
  Report report;
  for (const char* name : {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}) {
    DeviceRecord device;
    device.index = static_cast<int>(report.devices.size());
    device.name = name;
    report.devices.push_back(device);
  }
  ResultRow row;

  row.device = 1;
  REQUIRE(device_of(report, row) != nullptr);
  CHECK(device_of(report, row)->name == "NVIDIA H100 80GB HBM3");
  row.device = 0;
  CHECK(device_of(report, row) == &report.devices[0]);

  // A model row names no device; a measured row may name one the report lacks.
  row.device.reset();
  CHECK(device_of(report, row) == nullptr);
  row.device = 7;
  CHECK(device_of(report, row) == nullptr);
}
