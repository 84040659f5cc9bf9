// Pins roofline/report/row_energy.hpp and the report's energy object: the
// figures energy_figures derives from recorded-like readings
// (tests/roofline/energy_readings.hpp), the reasons that replace them, the
// JSON round trip and what the reader refuses, and the `table` columns.
#include <catch2/catch.hpp>

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_table.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/energy_readings.hpp"
#include "tests/roofline/profiled_row.hpp"

using namespace cfr;
using nlohmann::json;

namespace {

Report energy_report() {
  Report r;
  r.tool.version = "0.1.0";
  r.tool.git_commit = "abc";
  r.tool.git_dirty = false;
  r.provenance.source = ProvenanceSource::measured;
  r.provenance.created_utc = "2026-12-02T00:00:00Z";
  r.devices.push_back(test::h200_device());
  r.ceiling = test::h200_profile_ceiling();
  ResultRow row = model_row(fa1_wmma_kernel, {1, 8, 1024, 64, false, DType::fp16}, r.ceiling,
                            FlopConvention::half);
  row.device = 0;
  row.timing = Timing{};
  row.timing->samples_ms = {2.0, 2.0, 2.0};
  row.timing->summary = summarize(row.timing->samples_ms);
  row.achieved = achieved_figures(*row.model, 2.0, r.ceiling);
  row.energy = test::measured_energy();
  record_energy_figures(*row.energy, row.model->flops.counted());
  r.results.push_back(row);
  return r;
}

}  // namespace

TEST_CASE("energy figures: J/launch, W and FLOP/J from the readings; idle beside, not subtracted") {
  Energy e = test::measured_energy();
  const double flops = 1e12;
  const auto figures = energy_figures(e, flops);
  REQUIRE(std::holds_alternative<EnergyDerived>(figures));
  const EnergyDerived& d = std::get<EnergyDerived>(figures);
  // 3 s at 500 W over 1500 launches, within one 10 J step.
  CHECK(*d.joules_per_launch == Approx(1.0).margin(10.0 / 1500));
  CHECK(*d.average_W == Approx(500).epsilon(0.01));
  CHECK(*d.flop_per_J == Approx(flops / *d.joules_per_launch));
  CHECK(*d.idle_W == Approx(70).epsilon(0.01));
  CHECK(*d.run_s == 3.0);
  CHECK(*d.resolution_mJ == 10000);
  CHECK(*d.update_period_s == Approx(0.020).margin(0.0015));
  CHECK(*d.sm_clock_MHz == Approx((1980 + 1980 + 1965 + 1950) / 4.0));
  CHECK(*d.temperature_C == 63);
  CHECK(*d.power_W == Approx((110 + 490 + 505 + 500) / 4.0));
}

TEST_CASE("energy figures: a run that breaks the rule has a reason, not figures") {
  Energy e = test::measured_energy();
  e.readings = test::polled(500, 0.020, 0.001, 1.0);  // 2 % of the run per update
  record_energy_figures(e, 1e12);
  CHECK(e.unavailable.find("run too short") != std::string::npos);
  CHECK_FALSE(e.derived.joules_per_launch);

  Energy none = test::measured_energy();
  none.launches = 0;
  CHECK(std::get<std::string>(energy_figures(none, 1e12)).find("no launches") != std::string::npos);
}

TEST_CASE("energy figures: an idle interval that breaks the rule leaves only idle_W absent") {
  Energy e = test::measured_energy();
  e.idle_readings = test::polled(70, 0.020, 0.001, 0.5);
  record_energy_figures(e, 1e12);
  CHECK(e.collected());
  CHECK(e.derived.joules_per_launch);
  CHECK_FALSE(e.derived.idle_W);
}

TEST_CASE("energy figures: the measurement's own reason stands") {
  Energy e;
  e.unavailable = "NVML: cannot open libnvidia-ml.so.1: not found";
  record_energy_figures(e, 1e12);
  CHECK(e.unavailable == "NVML: cannot open libnvidia-ml.so.1: not found");
}

TEST_CASE("energy: the report's energy object survives a JSON round trip") {
  const Report original = energy_report();
  const json document = to_json(original);
  const json& energy = document["results"][0]["energy"];
  CHECK(energy["readings"][0] == json::array({0.0, 123456789012ull}));
  CHECK(energy["launches"] == 1500);
  CHECK(energy.contains("flop_per_J"));
  const Report back = report_from_json(document);
  REQUIRE(back.results[0].energy);
  const Energy& e = *back.results[0].energy;
  CHECK(e.readings == original.results[0].energy->readings);
  CHECK(e.idle_readings == original.results[0].energy->idle_readings);
  CHECK(e.probes == original.results[0].energy->probes);
  CHECK(e.derived.flop_per_J == original.results[0].energy->derived.flop_per_J);
  CHECK(e.derived.idle_W == original.results[0].energy->derived.idle_W);
  CHECK(to_json(back) == document);
}

TEST_CASE("energy: the reader refuses a bad reading and figures beside a reason") {
  json document = to_json(energy_report());
  json bad = document;
  bad["results"][0]["energy"]["readings"][2] = json::array({0.1, -5});
  CHECK_THROWS_WITH(report_from_json(bad),
                    "results[0].energy.readings[2]: expected [seconds, millijoules]");
  json reason = document;
  reason["results"][0]["energy"]["unavailable"] = "energy counter stalled";
  CHECK_THROWS_WITH(report_from_json(reason),
                    Catch::Contains("energy.joules_per_launch: present, but energy.unavailable"));
}

TEST_CASE("energy: the wide table shows the energy columns only where a row has energy") {
  Report report = energy_report();
  const std::string wide = render_table(report, TableFormat::text, {"wide"});
  CHECK(wide.find("J/launch") != std::string::npos);
  CHECK(wide.find("GFLOP/J") != std::string::npos);
  CHECK(wide.find("idle W") != std::string::npos);
  report.results[0].energy.reset();
  CHECK(render_table(report, TableFormat::text, {"wide"}).find("J/launch") == std::string::npos);
}
