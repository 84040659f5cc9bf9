#include "measured_ceilings.hpp"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "device_record.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/measure/device_info.hpp"
#include "report_file.hpp"
#include "roofline/report/auditability.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tool_info.hpp"

namespace cfr::app {

namespace {

std::optional<double> datasheet_value(const GpuSpec* gpu, const ceilings::CeilingMeasurement& m) {
  if (gpu == nullptr) return std::nullopt;
  // The copy, the driver's copy and the read stream: all HBM, one datasheet figure.
  if (m.unit == "GB/s" && m.figure.starts_with("dram_")) return gpu->memory_bandwidth_GBps.value;
  if (m.compute_unit) return gpu->peak(*m.compute_unit);
  return std::nullopt;  // L2 bandwidth: no vendor figure
}

}  // namespace

CeilingsReport measure_ceilings_report(int device, const GpuSpec* datasheet,
                                       const measure::TimingOptions& timing, bool energy,
                                       bool instruction_roofs) {
  CeilingsReport report;
  report.tool = current_tool_info();
  report.provenance.source = ProvenanceSource::measured;
  report.provenance.created_utc = utc_now_iso8601();
  report.provenance.command = command_line();
  report.provenance.host = host_name();
  const measure::DeviceInfo info = measure::query_device(device);
  report.device = device_record(info);
  report.datasheet_gpu = datasheet ? datasheet->id : "";
  for (ceilings::CeilingMeasurement& m :
       ceilings::measure_ceilings(device, timing, {}, energy, instruction_roofs)) {
    CeilingFigure figure;
    figure.figure = m.figure;
    figure.unit = m.unit;
    figure.value = m.value;
    figure.samples = m.samples;
    figure.method = m.method;
    figure.compute_unit = m.compute_unit;
    figure.datasheet_value = datasheet_value(datasheet, m);
    figure.sm_clock_MHz = m.timing.sm_clock_MHz;
    figure.energy = std::move(m.energy);
    if (figure.energy) record_ceiling_energy(*figure.energy);
    report.figures.push_back(std::move(figure));
  }
  report.provenance.reasons = auditability_failures(report);
  report.provenance.auditable = report.provenance.reasons.empty();
  return report;
}

CeilingRecord measured_ceiling(const std::string& mode, const GpuSpec& datasheet,
                               std::string_view table_origin, int device) {
  const CeilingRecord sheet = datasheet_ceiling(datasheet, table_origin);
  if (mode == "measured") {
    const CeilingsReport measured = measure_ceilings_report(device, &datasheet, {});
    return measured_ceiling_record(measured, sheet, "measured by this sweep");
  }
  try {
    return measured_ceiling_record(ceilings_from_json(read_json_file(mode)), sheet, mode);
  } catch (const InputError& error) {
    throw std::runtime_error(fmt::format("--ceiling {}: {}", mode, error.what()));
  }
}

}  // namespace cfr::app
