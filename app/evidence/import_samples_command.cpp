// `cuflash-roofline import-samples RAW`: turns a peer's raw measurements
// (schema cuflash-roofline/raw-samples/v1, docs/peers.md) into a report/v1
// document, every figure computed as `sweep` computes it: the model and
// roofline against --gpu/--ceiling and the document's device record, the
// timing statistics, the correctness verdict, auditability. The peer script
// runs it after measuring.
//
// `--plan` with the axis flags lists the problems a peer is to measure, as
// JSON on stdout, after checking the options the import will take, so that a
// typo costs no GPU time and no script parses the axes again.
//
// Exit 0; 1 when a row failed; 2 for bad input.
#include <iostream>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ceiling_choice.hpp"
#include "cli_checks.hpp"
#include "commands.hpp"
#include "gpu_choice.hpp"
#include "report_file.hpp"
#include "report_output.hpp"
#include "roofline/evidence/raw_samples.hpp"
#include "roofline/report/report_json.hpp"
#include "sweep_options.hpp"

namespace cfr::app {

namespace {

struct ImportSamplesOptions {
  SweepOptions sweep;  // the axes, --gpu, --gpu-table, --flop-convention and the outputs
  std::string raw;
  std::string ceiling = "datasheet";
  bool plan = false;
};

// The ceiling file, if one is named: read now, so a bad one fails first.
// "measured" would need the GPU the samples were taken on.
void check_ceiling_option(const std::string& ceiling) {
  if (ceiling == "measured") {
    throw std::invalid_argument(
        "--ceiling measured: import-samples measures nothing; run `cuflash-roofline ceilings "
        "--json FILE` on the GPU that took the samples and pass --ceiling FILE");
  }
  if (ceiling == "datasheet") return;
  try {
    read_ceilings_file(ceiling);
  } catch (const std::exception& error) {
    throw std::invalid_argument(fmt::format("--ceiling {}: {}", ceiling, error.what()));
  }
}

// Every option the import will take, checked without a device.
FlopConvention check_ceiling_options(const ImportSamplesOptions& options) {
  const FlopConvention convention = flop_convention_option(options.sweep.flop_convention);
  const GpuTable table = load_gpu_table(options.sweep.gpu_table);
  if (options.sweep.gpu != "auto") choose_gpu(table, options.sweep.gpu, std::nullopt);
  check_ceiling_option(options.ceiling);
  return convention;
}

void print_plan(const ImportSamplesOptions& options) {
  if (!options.raw.empty()) {
    throw std::invalid_argument(
        fmt::format("--plan lists problems and reads no samples: drop {}", options.raw));
  }
  check_ceiling_options(options);
  nlohmann::json problems = nlohmann::json::array();
  for (const AttentionProblem& problem : plan_problems(options.sweep)) {
    problems.push_back(problem_json(problem));
  }
  std::cout << json_text({{"problems", problems}}) << std::flush;
}

evidence::RawSamples read_raw_samples(const std::string& path) {
  try {
    return evidence::raw_samples_from_json(read_json_file(path));
  } catch (const InputError& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
}

int import(const ImportSamplesOptions& options) {
  if (options.raw.empty()) {
    throw std::invalid_argument("import-samples: give the raw samples FILE, or --plan");
  }
  const FlopConvention convention = check_ceiling_options(options);
  std::vector<std::string> inputs{options.raw};
  if (options.ceiling != "datasheet") inputs.push_back(options.ceiling);
  const OutputFiles outputs = report_outputs(options.sweep, inputs);
  const evidence::RawSamples raw = read_raw_samples(options.raw);
  if (raw.devices.empty()) {
    throw std::runtime_error(fmt::format("{}: devices: no device record", options.raw));
  }
  const ChosenCeiling chosen = choose_ceiling(load_gpu_table(options.sweep.gpu_table),
                                              options.sweep.gpu, options.ceiling, raw.devices);
  for (const std::string& warning : chosen.warnings) std::cerr << "WARNING: " << warning << '\n';
  Report report;
  try {
    report = evidence::samples_report(raw, chosen.ceiling, convention, chosen.reasons);
  } catch (const InputError& error) {
    throw std::runtime_error(fmt::format("{}: {}", options.raw, error.what()));
  }
  emit_report(report, outputs);
  for (const ResultRow& row : report.results) {
    if (row.status == RowStatus::failed) return exit_code::verdict;
  }
  return exit_code::ok;
}

}  // namespace

void add_import_samples_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<ImportSamplesOptions>();
  CLI::App* command = app.add_subcommand(
      "import-samples",
      "compute the report of a peer's raw samples (peers/torch_sdpa.py), every figure as sweep "
      "computes it; --plan lists the problems to measure");
  add_version_flag(*command);
  add_input_option(*command, "raw", options->raw, "raw samples JSON (docs/peers.md)");
  CLI::Option* plan =
      command->add_flag("--plan", options->plan,
                        "print the problems of the axis flags as JSON and check the other "
                        "options, reading no samples");
  const std::size_t before = command->get_options().size();
  add_axis_options(*command, options->sweep,
                   "head dims, any up to 2^20: the peers' kernels are not ours");
  for (std::size_t i = before; i < command->get_options().size(); ++i) {
    command->get_options()[i]->needs(plan);
  }
  command
      ->add_option("--gpu", options->sweep.gpu,
                   "ceiling: a GPU table id or 'auto' (the row matching the recorded device)")
      ->type_name("ID")
      ->check(not_empty())
      ->capture_default_str();
  add_gpu_table_option(*command, options->sweep.gpu_table);
  command
      ->add_option("--ceiling", options->ceiling,
                   "roof to judge against: datasheet or a `ceilings` JSON file")
      ->check(not_empty())
      ->capture_default_str();
  command
      ->add_option("--flop-convention", options->sweep.flop_convention,
                   "causal FLOP count: exact (unmasked pairs) or half (dense / 2)")
      ->type_name("NAME")
      ->capture_default_str();
  add_output_option(*command, "--json", options->sweep.json_path, "write the report JSON")
      ->excludes(plan);
  add_output_option(*command, "--csv", options->sweep.csv_path, "write the table as CSV")
      ->excludes(plan);
  add_output_option(*command, "--md", options->sweep.md_path, "write the table as Markdown")
      ->excludes(plan);
  command->callback([options, &status] {
    if (options->plan) {
      print_plan(*options);
      status.exit_status = exit_code::ok;
      return;
    }
    status.exit_status = import(*options);
  });
}

}  // namespace cfr::app
