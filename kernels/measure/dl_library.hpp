#pragma once

// A library opened with dlopen and its entry points resolved by name, for the
// libraries the tool opens at their first use rather than links (cuBLAS:
// cublas_library.hpp; NVML: nvml_library.hpp). Every failure is one line,
// "<what>: cannot open <library>: <dlerror>" or "<what>: <library> has no
// <symbol>: <dlerror>" (std::runtime_error, rule 1 of roofline/core/errors.hpp).
// The library stays open for the life of the process.

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace cfr::measure {

inline void* open_library(const std::string& what, const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    throw std::runtime_error(what + ": cannot open " + library + ": " +
                             (error != nullptr ? error : "dlopen failed"));
  }
  return handle;
}

// The exported name, not a header's macro (cublasCreate is a macro for
// cublasCreate_v2, nvmlInit for nvmlInit_v2): dlsym sees only the former.
template <typename Function>
void resolve_symbol(void* handle, const std::string& what, const std::string& library,
                    const char* symbol, Function& out) {
  dlerror();  // clear an earlier error, so the one below is dlsym's
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    const char* error = dlerror();
    throw std::runtime_error(what + ": " + library + " has no " + symbol + ": " +
                             (error != nullptr ? error : "null symbol"));
  }
  out = reinterpret_cast<Function>(address);
}

}  // namespace cfr::measure
