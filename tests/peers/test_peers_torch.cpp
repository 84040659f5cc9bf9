// The peer script's parts that need torch but no GPU: its inputs and fp32
// reference on the served shapes (tests/peers/test_reference_torch.py), on the
// CPU. Where the tests' python has no torch (CI), every test case is reported
// as skipped (exit 77), never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "python_unittest.hpp"
#include "skipped_main.hpp"

TEST_CASE("peers: the fp32 reference covers GQA, Nq != Nk, the bottom-right mask, odd lengths") {
  const UnittestRun run = run_unittest("test_reference_torch");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(run.output.find("\nOK\n") != std::string::npos);  // torch is there: no skip
}

int main(int argc, char* argv[]) {
  const std::string probe = std::string("'") + CFR_PYTHON + "' -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    return skip_every_test_case(std::string(CFR_PYTHON) + " cannot import torch");
  }
  return Catch::Session().run(argc, argv);
}
