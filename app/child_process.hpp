#pragma once

// Running another program to completion: ncu, and through it this tool's own
// profile-child mode.

#include <optional>
#include <string>
#include <vector>

namespace cfr::app {

// The executable `name` would run: itself when it contains a '/', else the
// first match on PATH. Empty when there is none.
std::optional<std::string> find_executable(const std::string& name);

// This process's executable (/proc/self/exe).
std::string self_executable();

struct ChildResult {
  int exit_status = -1;  // 128 + signal when killed; -1 when it could not start
  std::string error;     // why it could not start
};

// Runs argv[0] with argv, stdout to `stdout_path`, stderr to `stderr_path`,
// and waits.
ChildResult run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                      const std::string& stderr_path);

// The words of argv joined by spaces, each quoted where the shell would need it.
std::string shell_words(const std::vector<std::string>& argv);

}  // namespace cfr::app
