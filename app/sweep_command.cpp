// `cuflash-roofline sweep`: measure every configuration on the local GPU(s);
// without a CUDA device, the model alone, clearly labelled as such.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "gpu_choice.hpp"
#include "kernels/measure/device_info.hpp"
#include "measured_sweep.hpp"
#include "model_report.hpp"
#include "plugin_options.hpp"
#include "report_output.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::app {

namespace {

constexpr const char* no_device_reason = "no CUDA device on this machine: nothing was measured";

// The measuring options the user gave, "--devices 5", "--hot": without a
// device they change nothing, and the user is told.
std::vector<std::string> given(const std::vector<const CLI::Option*>& options) {
  std::vector<std::string> out;
  for (const CLI::Option* option : options) {
    if (option->count() == 0) continue;
    const std::string name = option->get_name();
    out.push_back(option->get_expected_min() == 0
                      ? name
                      : fmt::format("{} {}", name, fmt::join(option->results(), ",")));
  }
  return out;
}

int run_without_device(const SweepOptions& options, const SweepPlan& plan, bool require_gpu,
                       const std::vector<std::string>& ignored, const OutputFiles& outputs) {
  if (require_gpu) {
    throw NoDeviceError("--require-gpu: no CUDA device on this machine");
  }
  const GpuTable table = load_gpu_table(options.gpu_table);
  // --gpu auto has no device to match: the model's default roof, said below.
  const bool guessed = options.gpu == "auto";
  const GpuSpec& gpu = choose_gpu(table, guessed ? model_default_gpu : options.gpu, std::nullopt);
  Report report = model_report(plan, datasheet_ceiling(gpu, table.origin), gpu);
  report.provenance.reasons.push_back(no_device_reason);
  std::vector<std::string> notes;
  if (guessed) {
    notes.push_back(
        fmt::format("--gpu auto: no device to match; the '{}' ceiling is the model's "
                    "default (name another with --gpu)",
                    gpu.id));
  }
  if (!ignored.empty()) {
    notes.push_back(fmt::format("ignored, nothing is measured: {}", fmt::join(ignored, ", ")));
  }
  report.provenance.reasons.insert(report.provenance.reasons.end(), notes.begin(), notes.end());
  std::cerr << "============================================================\n"
               " NOTHING WAS MEASURED: no CUDA device on this machine.\n"
               " The figures below are the roofline model's projection for\n"
               " the '"
            << gpu.id
            << "' ceiling (provenance source: model).\n"
               "============================================================\n";
  for (const std::string& note : notes) std::cerr << "NOTE: " << note << '\n';
  emit_report(report, outputs);
  return 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<SweepOptions>();
  auto measure = std::make_shared<MeasureOptions>();
  auto require_gpu = std::make_shared<bool>(false);
  auto plugins = std::make_shared<PluginOptions>();
  auto profile = std::make_shared<ProfileOptions>();
  CLI::App* command = app.add_subcommand(
      "sweep",
      "measure the kernels on the local GPU(s) against the roofline (model only without a GPU)");
  add_version_flag(*command);
  add_sweep_options(*command, *options);
  const auto measure_options =
      std::make_shared<std::vector<const CLI::Option*>>(add_measure_options(*command, *measure));
  add_plugin_options(*command, *plugins);
  add_profile_options(*command, *profile);
  command->add_flag("--require-gpu", *require_gpu, "fail instead of falling back to the model");
  command->callback([options, measure, measure_options, require_gpu, plugins, profile, &status] {
    const std::optional<SweepPlan> planned = plan_with_plugins(*options, *plugins);
    if (!planned) return;  // --list
    const SweepPlan& plan = *planned;
    // Files the command reads, which no output may overwrite: plugins, a ceilings file.
    std::vector<std::string> inputs = plugins->paths;
    if (measure->ceiling != "datasheet" && measure->ceiling != "measured") {
      inputs.push_back(measure->ceiling);
    }
    const OutputFiles outputs = report_outputs(*options, inputs);
    const bool has_device = measure::device_count() > 0;
    check_measure_inputs(*measure, *profile, has_device);
    if (!has_device) {
      if (profile->enabled) std::cerr << "--profile: no CUDA device, nothing is profiled\n";
      status.exit_status =
          run_without_device(*options, plan, *require_gpu, given(*measure_options), outputs);
      return;
    }
    profile->plugins = plugins->paths;
    status.exit_status = run_measured_sweep(*options, *measure, plan, outputs, *profile);
  });
}

}  // namespace cfr::app
