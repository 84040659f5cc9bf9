// Pins kernels/measure/cublas_library.hpp: every entry point resolves in the
// toolkit's cuBLAS (CI installs cuda-toolkit-13-0, which has it; no GPU is
// needed to open it), a missing or wrong library is one line naming it, and
// opening it costs more than tests/startup_rss_bound.hpp allows a command.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "kernels/measure/cublas_library.hpp"
#include "tests/startup_rss_bound.hpp"

using cfr::measure::CublasLibrary;

TEST_CASE("cublas: opening it costs more resident memory than a command may use", "[cublas]") {
  // The first test of the file, before this process opens cuBLAS: a child
  // forked after would inherit the relocated pages and measure the parent.
  REQUIRE(dlopen(cfr::measure::cublas_soname().c_str(), RTLD_NOW | RTLD_NOLOAD) == nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      (void)cfr::measure::cublas();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  REQUIRE(child > 0);
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(child, &status, 0, &usage) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  INFO("a process that opened cuBLAS peaked at " << usage.ru_maxrss << " KiB");
  CHECK(usage.ru_maxrss > startup_rss_bound_kib);
}

TEST_CASE("cublas: the soname follows the headers' major version", "[cublas]") {
  CHECK(cfr::measure::cublas_soname() == "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
}

TEST_CASE("cublas: a library that cannot be opened is one line naming it", "[cublas]") {
  try {
    (void)cfr::measure::open_cublas("libcfr-no-such-cublas.so.13");
    FAIL("open_cublas did not throw");
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    CHECK(message.rfind("cuBLAS: cannot open libcfr-no-such-cublas.so.13: ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("cublas: a library without the entry points names the first one missing", "[cublas]") {
  // libm is open in every process of ours and has no cuBLAS symbol.
  CHECK_THROWS_WITH(cfr::measure::open_cublas("libm.so.6"),
                    Catch::StartsWith("cuBLAS: libm.so.6 has no cublasCreate_v2: "));
}

TEST_CASE("cublas: the toolkit's library resolves every entry point", "[cublas]") {
  const CublasLibrary& library = cfr::measure::cublas();
  CHECK(library.create != nullptr);
  CHECK(library.destroy != nullptr);
  CHECK(library.set_stream != nullptr);
  CHECK(library.gemm != nullptr);
  CHECK(library.gemm_strided_batched != nullptr);
  // Calls that need no device: the status strings of cublas_api.h.
  CHECK(std::string(library.status_name(CUBLAS_STATUS_NOT_INITIALIZED)) ==
        "CUBLAS_STATUS_NOT_INITIALIZED");
  CHECK(&cfr::measure::cublas() == &library);  // opened once
}
