// Pins the energy figures of a ceiling (`ceilings --energy`,
// roofline/report/ceiling_energy.hpp) on recorded-like readings
// (tests/roofline/energy_readings.hpp): 3 s at 600 W over 1500 launches is
// 1.2 J a launch, so 6e9 bytes a launch is 5e9 B/J (200 pJ/B) and 1.2e12
// FLOPs a launch 1e12 FLOP/J (1 pJ/FLOP); a counter that gives no interval
// leaves a reason instead of figures.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include "roofline/report/ceiling_energy.hpp"
#include "tests/roofline/energy_readings.hpp"

using namespace cfr;

TEST_CASE("a ceiling's energy is per byte for a bandwidth, per FLOP for a peak") {
  CHECK(energy_work("GB/s") == EnergyWork::byte);
  CHECK(energy_work("TFLOP/s") == EnergyWork::flop);
  const CeilingEnergy dram = test::measured_ceiling_energy(600, 6e9);
  REQUIRE(dram.collected());
  const CeilingEnergyDerived& d = dram.derived;
  CHECK(*d.joules_per_launch == Approx(1.2));
  CHECK(*d.average_W == Approx(600));
  CHECK(*d.work_per_J == Approx(5e9));
  CHECK(*d.pJ_per_work == Approx(200));
  CHECK(*d.run_s == Approx(3.0));
  CHECK(*d.resolution_mJ == Approx(12000));  // 600 W x 20 ms
  CHECK(*d.idle_W == Approx(70));            // beside, not subtracted
  CHECK(*d.sm_clock_MHz == Approx((1980 + 1980 + 1965 + 1950) / 4.0));
  CHECK(*d.temperature_C == 63);
  const CeilingEnergy tensor = test::measured_ceiling_energy(600, 1.2e12);
  CHECK(*tensor.derived.work_per_J == Approx(1e12));
  CHECK(*tensor.derived.pJ_per_work == Approx(1));
}

TEST_CASE("each derived figure has a key naming its work") {
  int per_work = 0;
  for (const CeilingEnergyField& field : ceiling_energy_fields()) {
    if (field.flop_key != field.byte_key) ++per_work;
  }
  CHECK(per_work == 2);
  const CeilingEnergyField& per_J = ceiling_energy_fields()[2];
  CHECK(per_J.key(EnergyWork::flop) == "flop_per_J");
  CHECK(per_J.key(EnergyWork::byte) == "bytes_per_J");
  CHECK(ceiling_energy_fields()[3].key(EnergyWork::byte) == "pJ_per_byte");
}

TEST_CASE("readings that give no interval, or no work, leave a reason") {
  CeilingEnergy stalled = test::measured_ceiling_energy(600, 6e9);
  stalled.run.readings = {stalled.run.readings.front(), stalled.run.readings.back()};
  record_ceiling_energy(stalled);  // figures recorded before: a record again clears them
  CHECK(stalled.run.unavailable.starts_with("energy counter stalled"));
  CHECK_FALSE(stalled.derived.joules_per_launch);

  CeilingEnergy no_work = test::measured_ceiling_energy(600, 6e9);
  no_work.work_per_launch = 0;
  const auto figures = ceiling_energy_figures(no_work);
  REQUIRE(std::holds_alternative<std::string>(figures));
  CHECK(std::get<std::string>(figures) == "energy: no work per launch");

  CeilingEnergy missing;  // the board's reason stands
  missing.run.unavailable = "NVML: libnvidia-ml.so.1 not found";
  record_ceiling_energy(missing);
  CHECK(missing.run.unavailable == "NVML: libnvidia-ml.so.1 not found");
}
