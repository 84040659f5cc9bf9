#include "adversarial.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

namespace {

std::string make_scratch_dir() {
  static std::atomic<int> counter{0};
  const std::string dir = temp_path("scratch-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

Scratch::Scratch() : dir(make_scratch_dir()) {}

Scratch::~Scratch() {
  std::error_code error;
  // Undo chmods a test made, so that everything can be removed.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    std::filesystem::permissions(entry.path(), std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, error);
  }
  std::filesystem::remove_all(dir, error);
}

std::string Scratch::path(std::string_view name) const {
  return dir + "/" + std::string(name);
}

std::string Scratch::write(std::string_view name, std::string_view text) const {
  const std::string file = path(name);
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

std::string Scratch::write_json(std::string_view name, const nlohmann::json& document) const {
  return write(name, document.dump(2));
}

std::vector<std::string> Scratch::entries() const {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

CliResult run(const std::vector<std::string>& arguments, const CliLimits& limits) {
  return run_cli(arguments, limits);
}

nlohmann::json committed(const std::string& relative_path) {
  return nlohmann::json::parse(read_file(source_path(relative_path)));
}

nlohmann::json model_report_json() {
  static const nlohmann::json report = [] {
    const CliResult r = run_cli({"model", "--gpu", "h200", "--kernels", "fa1_wmma", "--seq-lens",
                                 "1024,2048", "--json", "-"});
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
  }();
  return report;
}

void check_refused(const CliResult& result, const std::vector<std::string>& needles, int code) {
  INFO("stderr: " << result.err);
  INFO("stdout: " << result.out.substr(0, 400));
  CHECK_FALSE(result.timed_out);
  CHECK(result.signal == 0);
  CHECK(result.exit_code == code);
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  CHECK(result.err.rfind("cuflash-roofline: error: ", 0) == 0);
  for (const std::string& needle : needles) {
    INFO("needle: " << needle);
    CHECK(result.err.find(needle) != std::string::npos);
  }
  CHECK(result.out.empty());
}
