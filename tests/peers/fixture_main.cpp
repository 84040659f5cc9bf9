// Entry point of test_peers_fixture: until the fixture recorded on a GPU is in
// the tree, every test case is reported as skipped (exit 77, meson's skip
// code), never as passed; tests/peers/fixtures/README.md says how to record it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "peer_fixture.hpp"

int main(int argc, char* argv[]) {
  if (!std::ifstream(peer_fixture_path()).good()) {
    Catch::Session session;
    int test_cases = 0;
    for (const auto& test : Catch::getAllTestCasesSorted(session.config())) {
      (void)test;
      ++test_cases;
    }
    std::printf("skipped: %d test cases (no %s: record it on a GPU, see its README.md)\n",
                test_cases, peer_fixture_path().c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
