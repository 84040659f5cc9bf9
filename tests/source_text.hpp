#pragma once

// The source tree's files as the tool reads them: a gzip file as the text it
// holds, and a missing FILE as FILE.gz where that exists (committed reports
// over 1 MB are stored compressed: results/README.md).

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "roofline/core/gzip_text.hpp"

namespace cfr::test {

inline std::string read_source_text(const std::filesystem::path& path) {
  std::filesystem::path source = path;
  if (!std::filesystem::exists(source)) source += ".gz";
  std::ifstream in(source, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return text_of_file_bytes(bytes.str(), std::size_t{1} << 30);
}

// A report's file name: *.json, or *.json.gz.
inline bool is_json_file(const std::filesystem::path& path) {
  return is_report_file_name(path.filename().string());
}

}  // namespace cfr::test
