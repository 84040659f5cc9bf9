#include "evidence_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "report_file.hpp"

namespace cfr::app {

std::vector<Report> read_reports(const std::vector<std::string>& paths) {
  std::vector<Report> reports;
  reports.reserve(paths.size());
  for (const std::string& path : paths) reports.push_back(read_report_file(path));
  return reports;
}

bool is_folder(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

std::vector<std::string> json_files_in(const std::string& folder) {
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".json" && entry.is_regular_file(error)) {
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

}  // namespace cfr::app
