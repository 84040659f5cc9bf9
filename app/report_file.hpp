#pragma once

// The files the CLI reads (reports, ceilings, GPU and historical tables) and
// the JSON text it writes.

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report.hpp"

namespace cfr::app {

// A regular file (or a pipe) of at most this size: a report of the largest
// sweep the planner allows, with every sample, is far below it.
inline constexpr std::size_t max_input_bytes = std::size_t{512} << 20;

// A gzip file is read as the text it holds (by its first bytes, whatever its
// name), and a FILE that does not exist as FILE.gz where that does: reports
// over 1 MB are committed compressed (results/README.md), and a command naming
// results/h200/sweep-causal.json reads sweep-causal.json.gz.
// Throws std::runtime_error with one line "FILE: problem" for a missing,
// unreadable or oversized file, a folder or device, text that is not JSON, a
// repeated key, a number outside double range or nesting beyond reason
// (roofline/core/strict_json.hpp).
nlohmann::json read_json_file(const std::string& path);

// read_json_file + report_from_json; errors name the file and the key.
Report read_report_file(const std::string& path);

// read_json_file + ceilings_from_json, the same way.
CeilingsReport read_ceilings_file(const std::string& path);

// A report or a `ceilings` report, told apart by its "schema": a folder of
// results holds both (results/h200/), and plot, compare and table take one
// where the other is.
std::variant<Report, CeilingsReport> read_report_or_ceilings(const std::string& path);

// A document as the tool writes it: indented, one trailing newline. Strings
// that are not valid UTF-8 (a path in a reason) are written with U+FFFD
// instead of failing; the command line is escaped before it gets here.
std::string json_text(const nlohmann::json& document);

}  // namespace cfr::app
