// A stand-in for libnvidia-ml.so.1 with the entry points nvml_library.hpp
// resolves, so the loader and the board's sensors are tested without a
// driver: one device, bus id "00000000:01:00.0", a counter that adds 700 mJ
// at each read. fake_nvml_set_energy_status makes the counter's read return
// another status (3, NVML_ERROR_NOT_SUPPORTED: a board before Volta).
#include <cstring>

namespace {
unsigned long long counter = 1'000'000;
int energy_status = 0;
int initialized = 0;
struct nvmlDevice_st {
} board;
}  // namespace

extern "C" {
void fake_nvml_set_energy_status(int status) {
  energy_status = status;
}
int fake_nvml_initialized() {
  return initialized;
}
int nvmlInit_v2() {
  ++initialized;
  return 0;
}
int nvmlShutdown() {
  --initialized;
  return 0;
}
const char* nvmlErrorString(int status) {
  return status == 3 ? "Not Supported" : status == 6 ? "Not Found" : "Unknown Error";
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_st** device) {
  if (std::strcmp(bus_id, "00000000:01:00.0") != 0) return 6;  // NVML_ERROR_NOT_FOUND
  *device = &board;
  return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_st*, unsigned long long* mJ) {
  if (energy_status != 0) return energy_status;
  counter += 700;
  *mJ = counter;
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_st*, unsigned int* mW) {
  *mW = 123456;
  return 0;
}
int nvmlDeviceGetClockInfo(nvmlDevice_st*, int clock, unsigned int* MHz) {
  *MHz = clock == 1 ? 1980 : 0;
  return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_st*, int, unsigned int* C) {
  *C = 41;
  return 0;
}
}
