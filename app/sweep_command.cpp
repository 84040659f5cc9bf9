// `cuflash-roofline sweep`: measure every configuration on the local GPU(s);
// without a CUDA device, the model alone, clearly labelled as such.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "gpu_choice.hpp"
#include "kernels/measure/device_info.hpp"
#include "measured_sweep.hpp"
#include "model_report.hpp"
#include "report_output.hpp"
#include "roofline/row_model.hpp"

namespace cfr::app {

namespace {

constexpr const char* no_device_reason = "no CUDA device on this machine: nothing was measured";

int run_without_device(const SweepOptions& options, const SweepPlan& plan, bool require_gpu,
                       const OutputFiles& outputs) {
  if (require_gpu) {
    throw NoDeviceError("--require-gpu: no CUDA device on this machine");
  }
  const GpuTable table = load_gpu_table(options.gpu_table);
  const GpuSpec& gpu = choose_gpu(table, options.gpu, std::nullopt);
  Report report = model_report(plan, datasheet_ceiling(gpu, table.origin), gpu.cc());
  report.provenance.reasons.push_back(no_device_reason);
  std::cerr << "============================================================\n"
               " NOTHING WAS MEASURED: no CUDA device on this machine.\n"
               " The figures below are the roofline model's projection for\n"
               " the '"
            << gpu.id
            << "' ceiling (provenance source: model).\n"
               "============================================================\n";
  emit_report(report, outputs);
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<SweepOptions>();
  auto measure = std::make_shared<MeasureOptions>();
  auto require_gpu = std::make_shared<bool>(false);
  CLI::App* command = app.add_subcommand(
      "sweep",
      "measure the kernels on the local GPU(s) against the roofline (model only without a GPU)");
  add_version_flag(*command);
  add_sweep_options(*command, *options);
  add_measure_options(*command, *measure);
  command->add_flag("--require-gpu", *require_gpu, "fail instead of falling back to the model");
  command->callback([options, measure, require_gpu, &status] {
    const SweepPlan plan = plan_sweep(*options);
    std::vector<std::string> inputs;
    if (measure->ceiling != "datasheet" && measure->ceiling != "measured") {
      inputs.push_back(measure->ceiling);
    }
    const OutputFiles outputs = report_outputs(*options, inputs);
    if (measure::device_count() == 0) {
      status.exit_status = run_without_device(*options, plan, *require_gpu, outputs);
      return;
    }
    status.exit_status = run_measured_sweep(*options, *measure, plan, outputs);
  });
}

}  // namespace cfr::app
