#include "report_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/report_json.hpp"

namespace cfr::app {

void write_text_atomically(const std::string& path, std::string_view content) {
  if (path == "-") {
    std::cout << content << std::flush;
    return;
  }
  const std::string temporary = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", temporary));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error(fmt::format("{}: write failed", temporary));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error(fmt::format("{}: cannot rename {} over it", path, temporary));
  }
}

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

}  // namespace cfr::app
