// The peer script's parts that run without torch (the stop rule, the tree
// stamp, the raw samples of peers/torch_peer/measured_sweep.py, the command
// line), through python3's unittest (tests/peers/test_*.py): its messages
// against this build's tool, and its raw samples through this build's
// `import-samples`, `audit`, `table`, `compare` and `plot`. No torch, no GPU.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../app/cli_runner.hpp"

TEST_CASE("peers: the script's Python parts and raw-samples writer pass their unit tests") {
  const std::string log = temp_path("peers-unittest.log");
  const std::string command =
      std::string("cd '") + CFR_SOURCE_ROOT +
      "/tests/peers' && PYTHONDONTWRITEBYTECODE=1 CFR_BINARY='" + CFR_BINARY + "' '" + CFR_PYTHON +
      "' -m unittest test_torch_peer test_peer_report test_torch_sdpa_cli >'" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  const std::string output = read_file(log);
  std::remove(log.c_str());
  INFO(output);
  CHECK(status == 0);
  // unittest ends with "OK" (or "OK (skipped=N)"): skips are not allowed here,
  // since the binary is given.
  CHECK(output.find("\nOK\n") != std::string::npos);
}
