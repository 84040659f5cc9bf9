#pragma once

#include <stdexcept>

#include <CLI/CLI.hpp>

#include "roofline/core/errors.hpp"

namespace cfr::app {

// The exit codes of every command: the README's table ("Exit codes"), which
// tests/app/test_exit_codes.cpp holds this list and the binary to.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int verdict = 1;    // a failed row, an audit finding, a regression
inline constexpr int usage = 2;      // a bad option, input file or output target
inline constexpr int no_device = 3;  // a command that must measure found no CUDA device
inline constexpr int interrupted = 130;
}  // namespace exit_code

// Each subcommand lives in its own file and registers itself here. A command
// reports failure by throwing (one-line message, exit 2; NoDeviceError, exit
// 3) or by setting `exit_status` for outcomes that are not usage errors (the
// error rule: roofline/core/errors.hpp).
struct CommandStatus {
  int exit_status = 0;
};

// --version on a subcommand, printing the tool version and commit.
void add_version_flag(CLI::App& command);

void add_gpus_command(CLI::App& app);
void add_model_command(CLI::App& app, CommandStatus& status);
void add_sweep_command(CLI::App& app, CommandStatus& status);
void add_ceilings_command(CLI::App& app);
void add_table_command(CLI::App& app);
// Hidden: the single-launch mode `sweep --profile` runs under ncu.
void add_profile_child_command(CLI::App& app, CommandStatus& status);
// Hidden: docs/report-schema.md's figure table, from the figure descriptors.
void add_figure_table_command(CLI::App& app);
// Evidence tools (app/evidence/): each sets status.exit_status for a verdict
// (an inconsistent report, a regression) and throws for unusable input.
void add_audit_command(CLI::App& app, CommandStatus& status);
void add_compare_command(CLI::App& app, CommandStatus& status);
void add_plot_command(CLI::App& app, CommandStatus& status);
void add_report_command(CLI::App& app, CommandStatus& status);
void add_import_historical_command(CLI::App& app, CommandStatus& status);
void add_import_samples_command(CLI::App& app, CommandStatus& status);

}  // namespace cfr::app
