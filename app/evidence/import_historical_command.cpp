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

#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "gpu_choice.hpp"
#include "report_file.hpp"
#include "report_output.hpp"
#include "roofline/evidence/historical.hpp"
#include "roofline/report_json.hpp"
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
  } catch (const ReportError& error) {
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

void write(const Report& report, const std::string& path, const std::string& gpu) {
  write_text_atomically(path, report_text(report));
  std::ostream& screen = path == "-" ? std::cerr : std::cout;
  screen << fmt::format(
      "wrote {}: {} rows of {} (source historical, not auditable: not "
      "evidence)\n",
      path, report.results.size(), gpu);
}

void run(const ImportOptions& options) {
  if (options.out.empty() == options.out_dir.empty()) {
    throw std::runtime_error(
        "import-historical: give either --out FILE (with --gpu) or --out-dir DIR");
  }
  const evidence::HistoricalTable table = read_table(options.table);
  const GpuTable gpus = load_gpu_table(options.gpu_table);
  const std::vector<std::string> table_gpus = table.gpus();

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
    write(make_report(table, gpu, gpus, options.table), options.out, gpu);
    return;
  }
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the folder ({})", options.out_dir, error.message()));
  }
  std::size_t written = 0;
  for (const std::string& gpu : table_gpus) {
    if (!options.gpu.empty() && lowercase(gpu) != lowercase(options.gpu)) continue;
    const Report report = make_report(table, gpu, gpus, options.table);
    write(report, fmt::format("{}/{}-{}.json", options.out_dir, table.name, report.ceiling.gpu),
          gpu);
    ++written;
  }
  if (written == 0) {
    throw std::runtime_error(fmt::format("{}: --gpu {}: the table has no rows for that GPU",
                                         options.table, options.gpu));
  }
}

}  // namespace

void add_import_historical_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* command = app.add_subcommand(
      "import-historical",
      "turn a historical table (configs/historical/*.json) into unauditable report/v1 files, one "
      "per GPU");
  command->add_option("table", options->table, "historical table JSON")->required();
  command->add_option("--out", options->out,
                      "report file to write ('-' for stdout); needs --gpu "
                      "when the table has several GPUs");
  command->add_option("--out-dir", options->out_dir,
                      "folder to write one report per GPU into, as <name>-<gpu id>.json");
  command->add_option("--gpu", options->gpu,
                      "only this GPU's rows, e.g. H100 (required by --out when the table has "
                      "several GPUs)");
  command->add_option("--gpu-table", options->gpu_table,
                      "GPU table JSON for the ceilings (default: built in)");
  add_version_flag(*command);
  command->callback([options, &status] {
    run(*options);
    status.exit_status = 0;
  });
}

}  // namespace cfr::app
