#pragma once

// The files the CLI reads, and the JSON text it writes.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "roofline/report.hpp"

namespace cfr::app {

// Throws std::runtime_error with "FILE: problem" for a missing, unreadable or
// non-JSON file.
nlohmann::json read_json_file(const std::string& path);

// read_json_file + report_from_json; errors name the file and the key.
Report read_report_file(const std::string& path);

// A document as the tool writes it: indented, one trailing newline. Strings
// that are not valid UTF-8 (a path in a reason) are written with U+FFFD
// instead of failing; the command line is escaped before it gets here.
std::string json_text(const nlohmann::json& document);

}  // namespace cfr::app
