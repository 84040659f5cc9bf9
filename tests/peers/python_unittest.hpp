#pragma once

// Runs python3's unittest over modules of tests/peers/ with this build's tool
// (CFR_BINARY) and python (CFR_PYTHON), as the peer script's tests expect.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../app/cli_runner.hpp"

struct UnittestRun {
  int status = 0;
  std::string output;  // unittest's report: ends with "OK" when every test passed
};

inline UnittestRun run_unittest(const std::string& modules) {
  const std::string log = temp_path("peers-unittest.log");
  const std::string command = std::string("cd '") + CFR_SOURCE_ROOT +
                              "/tests/peers' && PYTHONDONTWRITEBYTECODE=1 CFR_BINARY='" +
                              CFR_BINARY + "' '" + CFR_PYTHON + "' -m unittest " + modules + " >'" +
                              log + "' 2>&1";
  UnittestRun run;
  run.status = std::system(command.c_str());
  run.output = read_file(log);
  std::remove(log.c_str());
  return run;
}
