// Entry point of test_peers_fixture: until the fixture recorded on a GPU is in
// the tree, every test case is reported as skipped (exit 77, meson's skip
// code), never as passed; tests/peers/fixtures/README.md says how to record it.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <fstream>

#include "peer_fixture.hpp"
#include "skipped_main.hpp"

int main(int argc, char* argv[]) {
  if (!std::ifstream(peer_fixture_path()).good()) {
    return skip_every_test_case("no " + peer_fixture_path() +
                                ": record it on a GPU, see its README.md");
  }
  return Catch::Session().run(argc, argv);
}
