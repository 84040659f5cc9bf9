// Pins kernels/measure/nvml_library.hpp: every entry point resolves in a
// library that has them (tests/measure/fake_nvml.cpp stands in for the
// driver's, which CI has not), calls reach it through the declared types, a
// missing or wrong library is one line naming it, and merely linking the
// tool does not load NVML.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "kernels/measure/nvml_library.hpp"

using namespace cfr::measure;

TEST_CASE("nvml: nothing loads libnvidia-ml until asked", "[nvml]") {
  CHECK(dlopen(nvml_soname().c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
}

TEST_CASE("nvml: a library that cannot be opened is one line naming it", "[nvml]") {
  try {
    (void)open_nvml("libcfr-no-such-nvml.so.1");
    FAIL("open_nvml did not throw");
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    CHECK(message.rfind("NVML: cannot open libcfr-no-such-nvml.so.1: ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("nvml: a library without the entry points names the first one missing", "[nvml]") {
  CHECK_THROWS_WITH(open_nvml("libm.so.6"),
                    Catch::StartsWith("NVML: libm.so.6 has no nvmlInit_v2: "));
}

TEST_CASE("nvml: every entry point resolves and is called through its declared type", "[nvml]") {
  const NvmlLibrary nvml = open_nvml(CFR_FAKE_NVML);
  REQUIRE(nvml.init() == nvml_success);
  NvmlDevice device = nullptr;
  CHECK(nvml.device_by_pci_bus_id("00000000:02:00.0", &device) != nvml_success);
  REQUIRE(nvml.device_by_pci_bus_id("00000000:01:00.0", &device) == nvml_success);
  unsigned long long first = 0, second = 0;
  REQUIRE(nvml.total_energy(device, &first) == nvml_success);
  REQUIRE(nvml.total_energy(device, &second) == nvml_success);
  CHECK(second - first == 700);
  unsigned int value = 0;
  CHECK((nvml.power_usage(device, &value) == nvml_success && value == 123456));
  CHECK((nvml.clock_info(device, nvml_clock_sm, &value) == nvml_success && value == 1980));
  CHECK((nvml.temperature(device, nvml_temperature_gpu, &value) == nvml_success && value == 41));
  CHECK(nvml_error_text(nvml, nvml_not_supported) == "Not Supported");
  CHECK(nvml.shutdown() == nvml_success);
}
