#pragma once

// Reports committed gzip-compressed (results/README.md: every report over
// 1 MB): a file's bytes are read as gzip where they start with its magic
// number, whatever the file is called. Pure: the readers (app/report_file.cpp,
// the tests' source readers) hand the bytes in.

#include <cstddef>
#include <string>
#include <string_view>

namespace cfr {

// Whether `bytes` start with gzip's magic number (RFC 1952: 1f 8b).
bool is_gzip(std::string_view bytes);

// The text of a gzip stream (one member or several, as `cat a.gz b.gz`
// makes). Throws std::runtime_error on a truncated or corrupt stream, or
// past `max_bytes` of text (a small file that inflates without end is no
// report).
std::string gunzip(std::string_view bytes, std::size_t max_bytes);

// `bytes` as text: inflated when gzip, as they are otherwise.
std::string text_of_file_bytes(std::string bytes, std::size_t max_bytes);

// Whether a file name is a report's: X.json, or X.json.gz (stored compressed).
bool is_report_file_name(std::string_view name);

// The report a file holds, by name: X.json for X.json.gz, the name otherwise.
std::string_view report_name_of(std::string_view file_name);

}  // namespace cfr
