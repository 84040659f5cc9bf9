#pragma once

// Runs the built cuflash-roofline binary the way a user would and captures
// what it printed and how it exited.

#include <string>

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `arguments` is appended to the binary's path and run through /bin/sh, with
// no CUDA device visible (CUDA_VISIBLE_DEVICES=""), so the tests behave the
// same on a GPU machine as on CI.
CliResult run_cli(const std::string& arguments);

std::string temp_path(const std::string& name);
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);
