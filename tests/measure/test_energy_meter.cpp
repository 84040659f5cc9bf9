// Pins kernels/measure/energy_meter.hpp's polling and board_sensors.hpp
// without a board: counters made of the clock (a board at a set power whose
// counter updates every few ms), one that stalls, one that cannot be read,
// and the sensors through tests/measure/fake_nvml.cpp.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>

#include "kernels/measure/board_sensors.hpp"
#include "kernels/measure/energy_meter.hpp"
#include "kernels/measure/nvml_library.hpp"

using namespace cfr;
using namespace cfr::measure;

namespace {

// A board drawing `watts` whose counter moves every `period_s`.
ReadCounter clocked_counter(double watts, double period_s) {
  const auto start = std::chrono::steady_clock::now();
  return [=]() -> OrReason<std::uint64_t> {
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return 5'000'000 + static_cast<std::uint64_t>(watts * period_s * 1000) *
                           static_cast<std::uint64_t>(t / period_s);
  };
}

}  // namespace

TEST_CASE("poller: keeps the first reading, each change and the last, timed from the first") {
  std::uint64_t value = 100;
  int calls = 0;
  CounterPoller poller([&]() -> OrReason<std::uint64_t> {
    ++calls;
    if (calls % 3 == 0) value += 50;
    return value;
  });
  for (int i = 0; i < 6; ++i) REQUIRE_FALSE(poller.poll());
  REQUIRE_FALSE(poller.finish());
  const auto& r = poller.readings();
  REQUIRE(r.size() == 4);  // 100 first; 150 at call 3; 200 at call 6; the last, 200 again
  CHECK(r[0] == CounterReading{0, 100});
  CHECK(r[1].mJ == 150);
  CHECK(r[2].mJ == 200);
  CHECK(r[3].mJ == 200);
  CHECK(r[3].t_s >= r[2].t_s);
}

TEST_CASE("poller: a read that fails is its reason") {
  CounterPoller poller(
      []() -> OrReason<std::uint64_t> { return std::string("nvml: Not Supported"); });
  CHECK(poller.poll() == "nvml: Not Supported");
  CHECK(poller.readings().empty());
}

TEST_CASE("idle: a 70 W board updating every 5 ms gives a run length that passes the rule") {
  const IdleInterval idle = measure_idle(clocked_counter(70, 0.005), {.max_idle_s = 5});
  INFO(idle.unavailable);
  REQUIRE(idle.unavailable.empty());
  // 1.25 x max(100 x 5 ms, 350 mJ / 1% / 70 W): 0.625 s, the period as polled.
  CHECK(idle.run_seconds == Approx(0.625).epsilon(0.15));
  const auto interval = counter_interval(idle.readings);
  REQUIRE(std::holds_alternative<CounterInterval>(interval));
  CHECK(std::get<CounterInterval>(interval).watts() == Approx(70).epsilon(0.05));
}

TEST_CASE("idle: a counter that never moves, or cannot be read, is a reason") {
  const IdleInterval still =
      measure_idle([]() -> OrReason<std::uint64_t> { return 42ull; }, {.max_idle_s = 0.05});
  CHECK(still.unavailable.find("stalled: 0 changes") != std::string::npos);
  const IdleInterval unread =
      measure_idle([]() -> OrReason<std::uint64_t> { return std::string("Not Supported"); }, {});
  CHECK(unread.unavailable == "idle interval: Not Supported");
}

TEST_CASE("idle: a counter too slow for the time allowed is a reason") {
  // 50 ms updates need 100 x 50 ms x 1.25 = 6.25 s of run; 1 s is allowed.
  const IdleInterval slow = measure_idle(clocked_counter(70, 0.050), {.max_idle_s = 1});
  CHECK(slow.unavailable.find("over the 1.0 s allowed") != std::string::npos);
}

TEST_CASE("sensors: the device by bus id, its counter and probe; NVML's words on failure") {
  const NvmlLibrary nvml = open_nvml(CFR_FAKE_NVML);
  CHECK_THROWS_WITH(BoardSensors(nvml, "00000000:02:00.0"),
                    "NVML: no device at PCI bus id 00000000:02:00.0: Not Found");
  const BoardSensors sensors(nvml, "00000000:01:00.0");
  const auto first = sensors.energy_mJ();
  const auto second = sensors.energy_mJ();
  REQUIRE(std::holds_alternative<std::uint64_t>(second));
  CHECK(std::get<std::uint64_t>(second) - std::get<std::uint64_t>(first) == 700);
  CHECK(sensors.probe(1.5) == EnergyProbe{1.5, 1980, 41, 123.456});
  using SetStatus = void (*)(int);
  auto set_status = reinterpret_cast<SetStatus>(
      dlsym(dlopen(CFR_FAKE_NVML, RTLD_NOW | RTLD_NOLOAD), "fake_nvml_set_energy_status"));
  REQUIRE(set_status != nullptr);
  set_status(nvml_not_supported);
  CHECK(std::get<std::string>(sensors.energy_mJ()) ==
        "nvmlDeviceGetTotalEnergyConsumption: Not Supported");
  set_status(nvml_success);
}
