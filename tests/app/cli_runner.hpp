#pragma once

// Runs the built cuflash-roofline binary the way a user would and captures
// what it printed and how it exited.

#include <chrono>
#include <string>
#include <vector>

struct CliResult {
  int exit_code = -1;  // -1 when killed by a signal (see `signal`) or timed out
  std::string out;     // stdout
  std::string err;     // stderr
  int signal = 0;
  bool timed_out = false;
  long max_rss_kib = 0;  // the child's peak resident set (ru_maxrss); the argv form only
};

// `arguments` is appended to the binary's path and run through /bin/sh, with
// no CUDA device visible (CUDA_VISIBLE_DEVICES=""), so the tests behave the
// same on a GPU machine as on CI.
CliResult run_cli(const std::string& arguments);

// Bounds for one run of the binary: a hostile input must fail fast and small,
// so a run past them counts as a failure of the test, not a hang of the suite.
struct CliLimits {
  std::chrono::seconds timeout{20};
  std::size_t address_space_bytes = std::size_t{4} << 30;  // RLIMIT_AS of the child
  std::vector<std::string> environment;                    // extra NAME=VALUE
  std::string working_directory;                           // empty: the test's own
  std::string stdin_path = "/dev/null";
};

// Runs the binary with exactly these arguments (no shell: any byte, spaces
// and non-UTF-8 included, reaches argv as given), no CUDA device visible, and
// the limits above.
CliResult run_cli(const std::vector<std::string>& arguments, const CliLimits& limits = {});

std::string temp_path(const std::string& name);
// A file of the source tree, e.g. source_path("configs/gpus.json").
std::string source_path(const std::string& relative);
// A command line split at spaces (the docs' and the workflow's commands hold
// no quotes).
std::vector<std::string> split_words(const std::string& command);
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
