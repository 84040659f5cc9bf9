// Pins how a `ceilings` file becomes the roof a sweep is judged on
// (measured_ceiling_record, roofline/report/ceilings_report.hpp): the read
// stream's figure becomes the record's read bandwidth, and only it does.
// The figures are made up, in the H200's range.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "roofline/report/ceilings_report.hpp"

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
