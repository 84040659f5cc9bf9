// Pins that a command which never touches a GPU does not pay for cuBLAS: the
// binary does not link it (kernels/measure/cublas_library.hpp opens it at its
// first use), and such commands stay under tests/startup_rss_bound.hpp's bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "tests/startup_rss_bound.hpp"

namespace {

// The DT_NEEDED entries of an ELF file, as readelf (binutils, which the
// compiler needs anyway) prints them: "... (NEEDED)  Shared library: [libc.so.6]".
std::vector<std::string> needed_libraries(const std::string& path) {
  std::vector<std::string> needed;
  FILE* pipe = ::popen(("readelf --dynamic --wide '" + path + "'").c_str(), "r");
  if (pipe == nullptr) return needed;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    const std::string text = line;
    const auto open = text.find('[');
    const auto close = text.find(']', open);
    if (text.find("(NEEDED)") != std::string::npos && close != std::string::npos)
      needed.push_back(text.substr(open + 1, close - open - 1));
  }
  ::pclose(pipe);
  return needed;
}

}  // namespace

TEST_CASE("footprint: the binary has no DT_NEEDED on cuBLAS, only on the shared CUDA runtime") {
  const std::vector<std::string> needed = needed_libraries(CFR_BINARY);
  INFO(Catch::Detail::stringify(needed));
  // readelf ran and was parsed: every binary of ours needs libc.
  REQUIRE(std::find(needed.begin(), needed.end(), "libc.so.6") != needed.end());
  for (const std::string& library : needed) CHECK(library.find("cublas") == std::string::npos);
  // The runtime stays shared: plugins launch through the same one (docs/plugins.md).
  CHECK(std::count_if(needed.begin(), needed.end(), [](const std::string& library) {
          return library.rfind("libcudart.so.", 0) == 0;
        }) == 1);
}

TEST_CASE("footprint: commands that touch no GPU stay under 64 MiB resident") {
  const std::string report = source_path("results/h200/sweep-causal.json");
  const std::vector<std::vector<std::string>> commands{
      {"--version"},     {"gpus"},          {"model", "--gpu", "h200"},
      {"table", report}, {"audit", report}, {"compare", report, report},
  };
  for (const std::vector<std::string>& arguments : commands) {
    const CliResult r = run_cli(arguments);
    INFO(arguments.front() << ": exit " << r.exit_code << ", " << r.max_rss_kib << " KiB, "
                           << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.max_rss_kib > 0);
    CHECK(r.max_rss_kib < startup_rss_bound_kib);
  }
}
