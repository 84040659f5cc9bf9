#include "kernels/measure/cublas_library.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace cfr::measure {

namespace {

// The symbols' names, not the header's macros: cublasCreate is a macro for
// cublasCreate_v2, and dlsym sees only the exported name.
template <typename Function>
void resolve(void* library, const std::string& name, const char* symbol, Function& out) {
  dlerror();  // clear an earlier error, so the one below is dlsym's
  void* address = dlsym(library, symbol);
  if (address == nullptr) {
    const char* error = dlerror();
    throw std::runtime_error("cuBLAS: " + name + " has no " + symbol + ": " +
                             (error != nullptr ? error : "null symbol"));
  }
  out = reinterpret_cast<Function>(address);
}

}  // namespace

std::string cublas_soname() {
  return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
}

CublasLibrary open_cublas(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    throw std::runtime_error("cuBLAS: cannot open " + library + ": " +
                             (error != nullptr ? error : "dlopen failed"));
  }
  CublasLibrary out;
  resolve(handle, library, "cublasCreate_v2", out.create);
  resolve(handle, library, "cublasDestroy_v2", out.destroy);
  resolve(handle, library, "cublasSetStream_v2", out.set_stream);
  resolve(handle, library, "cublasGemmEx", out.gemm);
  resolve(handle, library, "cublasGemmStridedBatchedEx", out.gemm_strided_batched);
  resolve(handle, library, "cublasGetStatusName", out.status_name);
  resolve(handle, library, "cublasGetStatusString", out.status_string);
  return out;
}

const CublasLibrary& cublas() {
  // A static initializer that throws leaves it uninitialized: the next call
  // tries again.
  static const CublasLibrary library = open_cublas(cublas_soname());
  return library;
}

}  // namespace cfr::measure
