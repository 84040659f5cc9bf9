// `cuflash-roofline model`: the roofline projection of every configuration,
// with no GPU involved.
#include <memory>
#include <optional>

#include "commands.hpp"
#include "gpu_choice.hpp"
#include "model_report.hpp"
#include "plugin_options.hpp"
#include "report_output.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::app {

void add_model_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<SweepOptions>();
  auto plugins = std::make_shared<PluginOptions>();
  options->gpu = model_default_gpu;
  CLI::App* command = app.add_subcommand(
      "model", "project FLOPs, HBM bytes and the roofline bound of each kernel (no GPU needed)");
  add_version_flag(*command);
  add_sweep_options(*command, *options);
  add_plugin_options(*command, *plugins);
  command->callback([options, plugins, &status] {
    const std::optional<SweepPlan> planned = plan_with_plugins(*options, *plugins);
    if (!planned) return;  // --list
    const SweepPlan& plan = *planned;
    // A plugin is a file the command reads: no output may overwrite it.
    const OutputFiles outputs = report_outputs(*options, plugins->paths);
    const GpuTable table = load_gpu_table(options->gpu_table);
    const GpuSpec& gpu = choose_gpu(table, options->gpu, std::nullopt);
    const Report report = model_report(plan, datasheet_ceiling(gpu, table.origin), gpu);
    emit_report(report, outputs);
    // A row fails here only when a plugin kernel gives no usable byte count.
    for (const ResultRow& row : report.results) {
      if (row.status == RowStatus::failed) status.exit_status = exit_code::verdict;
    }
  });
}

}  // namespace cfr::app
