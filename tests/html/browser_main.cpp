// Entry point of the browser test: without Chromium every test case is
// reported as skipped (exit 77, as tests/gpu_main.cpp does without a GPU),
// never as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "chromium.hpp"

int main(int argc, char* argv[]) {
  if (chromium_path().empty()) {
    Catch::Session session;
    int test_cases = 0;
    for (const auto& test : Catch::getAllTestCasesSorted(session.config())) {
      (void)test;
      ++test_cases;
    }
    std::printf("skipped: %d test cases (no chromium: apt-get install chromium, or CFR_CHROMIUM)\n",
                test_cases);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
