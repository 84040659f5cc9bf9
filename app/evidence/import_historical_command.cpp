// `cuflash-roofline import-historical TABLE`: turns a historical table
// (configs/historical/) into report/v1 documents, one per GPU because a
// report has one ceiling: --out-dir DIR writes DIR/<name>-<gpu>.json for
// every GPU; --out FILE --gpu NAME writes one. The reports say source
// "historical", auditable false: they can be plotted and compared, never
// cited. Exit 0; 2 for an unusable table or bad options.
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "gpu_choice.hpp"
#include "output_files.hpp"
#include "report_file.hpp"
#include "report_output.hpp"
#include "roofline/evidence/historical.hpp"
#include "roofline/report/report_json.hpp"
#include "tool_info.hpp"

namespace cfr::app {

namespace {

struct ImportOptions {
  std::string table;
  std::string out;
  std::string out_dir;
  std::string gpu;
  std::string gpu_table;
};

evidence::HistoricalTable read_table(const std::string& path) {
  try {
    return evidence::parse_historical_table(read_json_file(path));
  } catch (const InputError& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
}

Report make_report(const evidence::HistoricalTable& table, const std::string& gpu,
                   const GpuTable& gpus, const std::string& path) {
  Report report;
  try {
    report = evidence::historical_report(table, gpu, gpus);
  } catch (const std::exception& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
  report.tool = current_tool_info();
  report.provenance.created_utc = utc_now_iso8601();
  report.provenance.command = command_line();
  report.provenance.host = host_name();
  return report;
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The reports the options ask for, each with the file it goes to.
std::vector<std::pair<std::string, Report>> reports_to_write(const ImportOptions& options,
                                                             const evidence::HistoricalTable& table,
                                                             const GpuTable& gpus) {
  const std::vector<std::string> table_gpus = table.gpus();
  std::vector<std::pair<std::string, Report>> out;
  if (!options.out.empty()) {
    std::string gpu = options.gpu;
    if (gpu.empty()) {
      if (table_gpus.size() != 1) {
        throw std::runtime_error(fmt::format(
            "{}: the table holds {} GPUs and a report has one ceiling: pass --gpu, or use "
            "--out-dir",
            options.table, table_gpus.size()));
      }
      gpu = table_gpus.front();
    }
    // --gpu matches the printed name case-insensitively ("h100" or "H100").
    for (const std::string& name : table_gpus) {
      if (lowercase(name) == lowercase(gpu)) gpu = name;
    }
    out.emplace_back(options.out, make_report(table, gpu, gpus, options.table));
    return out;
  }
  for (const std::string& gpu : table_gpus) {
    if (!options.gpu.empty() && lowercase(gpu) != lowercase(options.gpu)) continue;
    Report report = make_report(table, gpu, gpus, options.table);
    std::string path =
        fmt::format("{}/{}-{}.json", options.out_dir, table.name, report.ceiling.gpu);
    out.emplace_back(std::move(path), std::move(report));
  }
  if (out.empty()) {
    throw std::runtime_error(fmt::format("{}: --gpu {}: the table has no rows for that GPU",
                                         options.table, options.gpu));
  }
  return out;
}

// --out-dir's folder, made if missing (its parent must exist); removed again
// if the import then writes nothing into it.
class OutputFolder {
 public:
  explicit OutputFolder(const std::string& path) : path_(path) {
    if (path.empty() || std::filesystem::is_directory(path)) return;
    std::error_code error;
    created_ = std::filesystem::create_directory(path, error);
    if (error) {
      throw std::runtime_error(
          fmt::format("--out-dir {}: cannot create the folder ({})", path, error.message()));
    }
  }
  ~OutputFolder() {
    std::error_code error;
    if (created_ && !kept_) std::filesystem::remove(path_, error);  // only when empty
  }
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  void keep() { kept_ = true; }

 private:
  std::string path_;
  bool created_ = false;
  bool kept_ = false;
};

void run(const ImportOptions& options) {
  if (options.out.empty() == options.out_dir.empty()) {
    throw std::runtime_error(
        "import-historical: give either --out FILE (with --gpu) or --out-dir DIR");
  }
  const evidence::HistoricalTable table = read_table(options.table);
  const GpuTable gpus = load_gpu_table(options.gpu_table);
  const auto reports = reports_to_write(options, table, gpus);

  OutputFolder folder(options.out_dir);
  OutputFiles outputs;
  outputs.protect_input(options.table);
  outputs.protect_input(options.gpu_table);
  for (const auto& [path, report] : reports) {
    outputs.add(path, options.out.empty() ? "--out-dir" : "--out", path);
  }
  std::vector<OutputFiles::Content> contents;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    contents.push_back({reports[i].first, report_text(reports[i].second)});
  }
  outputs.write(contents);
  folder.keep();
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  for (const auto& [path, report] : reports) {
    screen << fmt::format(
        "wrote {}: {} rows of {} (source historical, not auditable: not evidence)\n", path,
        report.results.size(), report.ceiling.gpu);
  }
}

}  // namespace

void add_import_historical_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* command = app.add_subcommand(
      "import-historical",
      "turn a historical table (configs/historical/*.json) into unauditable report/v1 files, one "
      "per GPU");
  add_input_option(*command, "table", options->table, "historical table JSON")->required();
  add_output_option(*command, "--out", options->out,
                    "write one report (needs --gpu when the table has several GPUs)");
  command
      ->add_option("--out-dir", options->out_dir,
                   "folder to write one report per GPU into, as <name>-<gpu id>.json (made if "
                   "missing)")
      ->type_name("DIR")
      ->check(not_empty());
  command
      ->add_option("--gpu", options->gpu,
                   "only this GPU's rows, e.g. H100 (required by --out when the table has "
                   "several GPUs)")
      ->type_name("NAME")
      ->check(not_empty());
  add_gpu_table_option(*command, options->gpu_table);
  add_version_flag(*command);
  command->callback([options, &status] {
    run(*options);
    status.exit_status = 0;
  });
}

}  // namespace cfr::app
