#pragma once

// What the four evidence subcommands share: the way they read report files
// and write outputs.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "roofline/report.hpp"

namespace cfr::app {

// Every file is read and checked against the schema before any work starts;
// the first unusable one throws std::runtime_error "FILE: key path: problem".
std::vector<Report> read_reports(const std::vector<std::string>& paths);

// The *.json files directly inside `folder`, sorted by name. Throws when it
// is not a readable folder.
std::vector<std::string> json_files_in(const std::string& folder);

bool is_folder(const std::string& path);

}  // namespace cfr::app
