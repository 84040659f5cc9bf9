// The peer script's parts that run without torch (the stop rule, the tree
// stamp, the raw samples of peers/torch_peer/measured_sweep.py, the command
// line), through python3's unittest (tests/peers/test_*.py): its messages
// against this build's tool, and its raw samples through this build's
// `import-samples`, `audit`, `table`, `compare` and `plot`. No torch, no GPU.
#include <catch2/catch.hpp>

#include "python_unittest.hpp"

TEST_CASE("peers: the script's Python parts and raw-samples writer pass their unit tests") {
  const UnittestRun run = run_unittest("test_torch_peer test_peer_report test_torch_sdpa_cli");
  INFO(run.output);
  CHECK(run.status == 0);
  // unittest ends with "OK" (or "OK (skipped=N)"): skips are not allowed here,
  // since the binary is given.
  CHECK(run.output.find("\nOK\n") != std::string::npos);
}
