#include "evidence_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "report_file.hpp"
#include "roofline/core/gzip_text.hpp"
#include "roofline/report/report_values.hpp"

namespace cfr::app {

std::vector<Report> read_reports(const std::vector<std::string>& paths) {
  std::vector<Report> reports;
  reports.reserve(paths.size());
  for (const std::string& path : paths) reports.push_back(read_report_file(path));
  return reports;
}

EvidenceFiles read_evidence_files(const std::vector<std::string>& paths) {
  EvidenceFiles files;
  for (const std::string& path : paths) {
    auto document = read_report_or_ceilings(path);
    if (auto* report = std::get_if<Report>(&document)) {
      files.report_paths.push_back(path);
      files.reports.push_back(std::move(*report));
    } else {
      files.ceilings_paths.push_back(path);
      files.ceilings.push_back(std::get<CeilingsReport>(std::move(document)));
    }
  }
  return files;
}

bool is_folder(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

std::vector<std::string> json_files_in(const std::string& folder) {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    // Every *.json (or *.json.gz, a committed report over 1 MB) but a
    // folder: a dangling link or a FIFO is listed too, so that reading it
    // fails naming it, rather than it being left out unsaid.
    std::error_code kind;
    const std::string name = entry.path().filename().string();
    if (is_report_file_name(name) && !entry.is_directory(kind)) {
      names.push_back(entry.path().filename().string());
    }
  }
  if (error) throw std::runtime_error(fmt::format("{}: cannot list ({})", folder, error.message()));
  std::sort(names.begin(), names.end());
  return names;
}

OutputFiles evidence_outputs(const std::vector<std::string>& inputs,
                             const std::vector<std::pair<std::string, std::string>>& targets) {
  OutputFiles outputs;
  for (const std::string& input : inputs) outputs.protect_input(input);
  for (const auto& [option, path] : targets) outputs.add(option, path);
  return outputs;
}

// A `ceilings` file as a roof: measured DRAM bandwidth (and read bandwidth,
// where the file has it) and the best measured peak per compute unit.
CeilingRecord measured_roof(const CeilingsReport& measured, const std::string& path) {
  const CeilingFigure* dram = measured.find("dram_bandwidth");
  if (dram == nullptr || dram->value <= 0) {
    throw std::runtime_error(fmt::format("{}: figures: no positive dram_bandwidth figure", path));
  }
  CeilingRecord roof;
  roof.gpu = measured.device.name.empty() ? path : measured.device.name;
  roof.source = "measured";
  roof.source_detail = path;
  roof.bandwidth_GBps = dram->value;
  roof.read_bandwidth_GBps = measured.read_bandwidth();
  for (ComputeUnit unit : all_compute_units) {
    roof.peak_TFLOPs[static_cast<std::size_t>(unit)] = measured.best_peak(unit);
  }
  // Every compute figure as an instruction's roof, as `sweep --ceiling FILE`
  // judges rows (measured_ceiling), so the chart draws mma.sync's and
  // wgmma's roofs beside the unit's best.
  for (const CeilingFigure& f : measured.figures) {
    if (f.compute_unit) roof.instruction_TFLOPs[f.figure] = f.value;
  }
  try {
    check_ceiling_values(roof, "figures");
  } catch (const InputError& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
  return roof;
}

void name_like_reports(CeilingRecord& roof, const std::vector<Report>& reports) {
  for (const Report& report : reports) {
    if (!report.ceiling.matches_device.value_or(false)) continue;
    for (const DeviceRecord& device : report.devices) {
      if (device.name != roof.gpu) continue;
      roof.gpu = report.ceiling.gpu;
      roof.gpu_name = report.ceiling.gpu_name;
      return;
    }
  }
}

}  // namespace cfr::app
