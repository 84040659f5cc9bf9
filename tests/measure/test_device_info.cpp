// Pins query_device (kernels/measure/device_info.hpp) on device 0: every field
// filled, versions in "major.minor" form.
#include <catch2/catch.hpp>

#include <regex>
#include <stdexcept>

#include "kernels/measure/device_info.hpp"

using namespace cfr::measure;

TEST_CASE("query_device describes device 0", "[device_info]") {
  REQUIRE(device_count() > 0);
  const DeviceInfo info = query_device(0);
  CHECK(info.index == 0);
  CHECK_FALSE(info.name.empty());
  CHECK(std::regex_match(info.cc, std::regex(R"(\d+\.\d+)")));
  CHECK(info.sm_count > 0);
  CHECK(info.l2_bytes > 0);
  CHECK(info.memory_bytes > 0);
  CHECK(info.clock_MHz > 0);
  CHECK(info.memory_clock_MHz > 0);
  CHECK(info.memory_bus_width_bits > 0);
  CHECK(std::regex_search(info.driver, std::regex(R"(^\d+\.\d+)")));
  CHECK(std::regex_match(info.runtime, std::regex(R"(\d+\.\d+)")));
  CHECK_FALSE(info.pci_bus_id.empty());
}

TEST_CASE("query_device rejects an index past the last device", "[device_info]") {
  CHECK_THROWS_AS(query_device(device_count()), std::invalid_argument);
  CHECK_THROWS_AS(query_device(-1), std::invalid_argument);
}
