#pragma once

// File I/O of the CLI: atomic writes and strict reads that name the file.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "roofline/report.hpp"

namespace cfr::app {

// Writes to PATH.tmp.PID and renames over PATH, so a reader never sees half a
// file. "-" writes to stdout.
void write_text_atomically(const std::string& path, std::string_view content);

// Throws std::runtime_error with "FILE: problem" for a missing, unreadable or
// non-JSON file.
nlohmann::json read_json_file(const std::string& path);

// read_json_file + report_from_json; errors name the file and the key.
Report read_report_file(const std::string& path);

}  // namespace cfr::app
