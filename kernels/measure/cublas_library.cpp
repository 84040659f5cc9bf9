#include "kernels/measure/cublas_library.hpp"

#include "kernels/measure/dl_library.hpp"

namespace cfr::measure {

std::string cublas_soname() {
  return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
}

CublasLibrary open_cublas(const std::string& library) {
  void* handle = open_library("cuBLAS", library);
  CublasLibrary out;
  resolve_symbol(handle, "cuBLAS", library, "cublasCreate_v2", out.create);
  resolve_symbol(handle, "cuBLAS", library, "cublasDestroy_v2", out.destroy);
  resolve_symbol(handle, "cuBLAS", library, "cublasSetStream_v2", out.set_stream);
  resolve_symbol(handle, "cuBLAS", library, "cublasGemmEx", out.gemm);
  resolve_symbol(handle, "cuBLAS", library, "cublasGemmStridedBatchedEx", out.gemm_strided_batched);
  resolve_symbol(handle, "cuBLAS", library, "cublasGetStatusName", out.status_name);
  resolve_symbol(handle, "cuBLAS", library, "cublasGetStatusString", out.status_string);
  return out;
}

const CublasLibrary& cublas() {
  // A static initializer that throws leaves it uninitialized: the next call
  // tries again.
  static const CublasLibrary library = open_cublas(cublas_soname());
  return library;
}

}  // namespace cfr::measure
