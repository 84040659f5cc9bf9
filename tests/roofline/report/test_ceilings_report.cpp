// Pins how a `ceilings` file becomes the roof a sweep is judged on
// (measured_ceiling_record, roofline/report/ceilings_report.hpp): the read
// stream's figure becomes the record's read bandwidth, and only it does.
// The figures are made up, in the H200's range.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "roofline/report/ceilings_report.hpp"
#include "tests/roofline/energy_readings.hpp"

using namespace cfr;

namespace {

CeilingFigure bandwidth_figure(const char* name, double GBps) {
  CeilingFigure f;
  f.figure = name;
  f.unit = "GB/s";
  f.value = GBps;
  f.samples = {GBps};
  f.method = "made up";
  f.datasheet_value = 4800;
  return f;
}

CeilingsReport measured(bool with_read_stream) {
  CeilingsReport r;
  r.device.name = "NVIDIA H200";
  r.datasheet_gpu = "h200";
  r.figures.push_back(bandwidth_figure("dram_bandwidth", 3935));
  r.figures.push_back(bandwidth_figure("dram_bandwidth_memcpy", 4270));
  if (with_read_stream) r.figures.push_back(bandwidth_figure("dram_read_bandwidth", 4600));
  CeilingFigure mma;
  mma.figure = "fp16_tensor_mma";
  mma.unit = "TFLOP/s";
  mma.value = 800;
  mma.samples = {800};
  mma.compute_unit = ComputeUnit::fp16_tensor;
  r.figures.push_back(mma);
  return r;
}

CeilingRecord datasheet() {
  CeilingRecord c;
  c.gpu = "h200";
  c.source = "datasheet";
  c.bandwidth_GBps = 4800;
  c.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  return c;
}

}  // namespace

TEST_CASE("the read stream's figure is the measured record's read bandwidth, beside the copy's") {
  const CeilingsReport with_read = measured(true);
  CHECK(with_read.read_bandwidth() == 4600);
  const CeilingRecord roof = measured_ceiling_record(with_read, datasheet(), "ceilings.json");
  CHECK(roof.source == "measured");
  CHECK(roof.bandwidth_GBps == 3935);  // the copy kernel's, not the driver's or the stream's
  CHECK(roof.read_bandwidth_GBps == 4600);
  CHECK(roof.peak(ComputeUnit::fp16_tensor) == 800);
}

TEST_CASE("a ceilings file without the read stream, and the datasheet, give no read bandwidth") {
  const CeilingsReport copy_only = measured(false);
  CHECK_FALSE(copy_only.read_bandwidth().has_value());
  CHECK_FALSE(datasheet().read_bandwidth_GBps.has_value());
  const CeilingRecord roof = measured_ceiling_record(copy_only, datasheet(), "ceilings.json");
  CHECK_FALSE(roof.read_bandwidth_GBps.has_value());
  CHECK(roof.bandwidth(MemoryRoof::dram_read) == 3935);  // the copy's slope stands in
}

TEST_CASE("the ceilings table and file carry the read stream like any other figure") {
  const CeilingsReport report = measured(true);
  const std::string table = render_ceilings_table(report);
  CHECK(table.find("dram_read_bandwidth      4600.0 GB/s         4800.0   0.958") !=
        std::string::npos);
  const CeilingsReport back = ceilings_from_json(nlohmann::json::parse(to_json(report).dump()));
  CHECK(back.read_bandwidth() == 4600);
}

TEST_CASE("a figure's energy is written per byte or per FLOP and read back as written") {
  CeilingsReport report = measured(false);
  report.figures[0].energy = test::measured_ceiling_energy(600, 6e9);     // dram_bandwidth
  report.figures[2].energy = test::measured_ceiling_energy(600, 1.2e12);  // fp16_tensor_mma
  report.figures[1].energy = CeilingEnergy{};
  report.figures[1].energy->run.unavailable = "NVML: libnvidia-ml.so.1 not found";
  const nlohmann::json document = to_json(report);
  const nlohmann::json& dram = document["figures"][0]["energy"];
  CHECK(dram["bytes_per_J"] == 5e9);
  CHECK(dram["pJ_per_byte"] == 200);
  CHECK_FALSE(dram.contains("flop_per_J"));
  CHECK(dram["work_per_launch"] == 6e9);
  CHECK(dram["readings"].size() == report.figures[0].energy->run.readings.size());
  const nlohmann::json& mma = document["figures"][2]["energy"];
  CHECK(mma["flop_per_J"] == 1e12);
  CHECK(mma["pJ_per_flop"] == 1);
  CHECK_FALSE(mma.contains("bytes_per_J"));
  CHECK(document["figures"][1]["energy"]["bytes_per_J"].is_null());

  const CeilingsReport back = ceilings_from_json(nlohmann::json::parse(document.dump()));
  REQUIRE(back.figures[0].energy);
  CHECK(back.figures[0].energy->derived.work_per_J == 5e9);
  CHECK(back.figures[0].energy->run.readings == report.figures[0].energy->run.readings);
  CHECK(back.figures[2].energy->derived.pJ_per_work == 1);
  CHECK(back.figures[1].energy->run.unavailable == "NVML: libnvidia-ml.so.1 not found");
  CHECK_FALSE(measured(false).figures[0].energy);
  CHECK(to_json(measured(false))["figures"][0].contains("energy") == false);
}

TEST_CASE("the ceilings table lists each figure's energy, or its reason, only where measured") {
  CHECK(render_ceilings_table(measured(true)).find("Energy") == std::string::npos);
  CeilingsReport report = measured(false);
  report.figures[0].energy = test::measured_ceiling_energy(600, 6e9);
  report.figures[2].energy = test::measured_ceiling_energy(600, 1.2e12);
  report.figures[1].energy = CeilingEnergy{};
  report.figures[1].energy->run.unavailable = "no counter";
  const std::string table = render_ceilings_table(report);
  CHECK(table.find("dram_bandwidth               1.2   600.0        5e+09 B/J       200 pJ/B") !=
        std::string::npos);
  CHECK(table.find("fp16_tensor_mma              1.2   600.0     1e+12 FLOP/J      1 pJ/FLOP") !=
        std::string::npos);
  CHECK(table.find("dram_bandwidth_memcpy unavailable: no counter") != std::string::npos);
}

TEST_CASE("the energy roofline's ceilings: the best FLOP/J of a unit, the DRAM copy's B/J") {
  CeilingsReport report = measured(true);
  CHECK_FALSE(report.dram_bytes_per_J());
  CHECK_FALSE(report.best_flop_per_J(ComputeUnit::fp16_tensor));
  report.figures[0].energy = test::measured_ceiling_energy(600, 6e9);     // dram_bandwidth
  report.figures[2].energy = test::measured_ceiling_energy(600, 9e9);     // dram_read_bandwidth
  report.figures[3].energy = test::measured_ceiling_energy(600, 1.2e12);  // fp16_tensor_mma
  CeilingFigure cublas = report.figures[3];
  cublas.figure = "fp16_tensor_cublas";
  cublas.energy = test::measured_ceiling_energy(600, 0.6e12);
  report.figures.push_back(cublas);
  REQUIRE(report.dram_bytes_per_J());
  CHECK(*report.dram_bytes_per_J() == Approx(5e9));  // the copy's, not the read stream's
  REQUIRE(report.best_flop_per_J(ComputeUnit::fp16_tensor));
  CHECK(*report.best_flop_per_J(ComputeUnit::fp16_tensor) == Approx(1e12));
  CHECK_FALSE(report.best_flop_per_J(ComputeUnit::fp32_simt));
}
