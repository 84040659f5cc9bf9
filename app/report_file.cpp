#include "report_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/report_json.hpp"

namespace cfr::app {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open (missing or unreadable)", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (text.empty()) throw std::runtime_error(fmt::format("{}: empty file", path));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw std::runtime_error(
        fmt::format("{}: not valid JSON (byte {}): truncated or not a report", path, error.byte));
  }
}

Report read_report_file(const std::string& path) {
  const nlohmann::json document = read_json_file(path);
  try {
    return report_from_json(document);
  } catch (const ReportError& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
}

std::string json_text(const nlohmann::json& document) {
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cfr::app
