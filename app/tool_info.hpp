#pragma once

#include <string>

#include "roofline/report/report.hpp"

namespace cfr::app {

// Version, build type, CUDA archs, and the commit stamped at build time.
ToolInfo current_tool_info();

// "cuflash-roofline 0.1.0 (commit)": the tool that made a page or a file.
std::string generator_name();

std::string utc_now_iso8601();
std::string host_name();

// The command line as typed (argv joined by spaces, bytes that are not UTF-8
// written as \xNN), set once by main().
void set_command_line(int argc, char** argv);
const std::string& command_line();

}  // namespace cfr::app
