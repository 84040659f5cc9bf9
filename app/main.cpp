// cuflash-roofline: benchmarks attention kernels against the roofline model.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "build_info.hpp"
#include "commands.hpp"
#include "git_info.hpp"
#include "tool_info.hpp"

int main(int argc, char** argv) {
  cfr::app::set_command_line(argc, argv);
  CLI::App app{"cuflash-roofline: attention kernels against the roofline, with evidence"};
  app.set_version_flag("--version", std::string(CFR_VERSION) + " (" + CFR_GIT_DESCRIBE + ")");
  app.require_subcommand(1);
  cfr::app::CommandStatus status;
  cfr::app::add_gpus_command(app);
  cfr::app::add_model_command(app);
  cfr::app::add_sweep_command(app, status);
  cfr::app::add_ceilings_command(app, status);
  cfr::app::add_table_command(app);
  cfr::app::add_profile_child_command(app, status);
  cfr::app::add_audit_command(app, status);
  cfr::app::add_compare_command(app, status);
  cfr::app::add_plot_command(app, status);
  cfr::app::add_import_historical_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cuflash-roofline: error: %s\n", error.what());
    return 2;
  }
  return status.exit_status;
}
