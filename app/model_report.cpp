#include "model_report.hpp"

#include "roofline/report/model_rows.hpp"
#include "roofline/report/row_model.hpp"
#include "tool_info.hpp"

namespace cfr::app {

Report model_report(const SweepPlan& plan, const CeilingRecord& ceiling, const GpuSpec& gpu) {
  const L2ModelInputs l2 = l2_model_inputs(gpu);
  Report report;
  report.tool = current_tool_info();
  report.provenance.source = ProvenanceSource::model;
  report.provenance.auditable = false;
  report.provenance.reasons = {model_projection_reason};
  report.provenance.created_utc = utc_now_iso8601();
  report.provenance.command = command_line();
  report.provenance.host = host_name();
  report.provenance.plugins = plan.plugins;
  report.ceiling = ceiling;
  std::vector<ModelRowRequest> requests;
  requests.reserve(plan.points.size());
  for (const SweepPoint& point : plan.points) requests.push_back({point.kernel, point.problem});
  report.results = model_rows(requests, ceiling, plan.convention, gpu.cc(), l2);
  return report;
}

}  // namespace cfr::app
