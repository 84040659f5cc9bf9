#pragma once

// cuBLAS, opened with dlopen at its first use instead of linked. Loading
// libcublas and libcublasLt costs about 210 MiB of resident memory
// (docs/perf-notes.md, "What a command costs before it does anything"), which
// every command paid, `--version` included, though only the naive kernel and
// the cuBLAS tensor peak call it. Nothing links libcublas, so a direct call
// to a cuBLAS function fails to link: every call goes through cublas().
//
// Host-only header: plain C++ translation units may include it.

#include <string>

#include <cublas_v2.h>

namespace cfr::measure {

// cublasGemmEx and cublasGemmStridedBatchedEx are overloaded in C++ (an inline
// wrapper takes a cudaDataType compute type), so their types are spelled out;
// the static_casts below fail to compile unless one declaration of the header
// has exactly that type.
using CublasGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void*, const void*, cudaDataType, int,
                                      const void*, cudaDataType, int, const void*, void*,
                                      cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatched = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
    cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);
static_assert(sizeof(static_cast<CublasGemm>(&cublasGemmEx)) > 0);
static_assert(sizeof(static_cast<CublasGemmStridedBatched>(&cublasGemmStridedBatchedEx)) > 0);

// The entry points the tool calls, none of them null.
struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  CublasGemm gemm = nullptr;
  CublasGemmStridedBatched gemm_strided_batched = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The soname of the cuBLAS the headers describe: "libcublas.so.13".
std::string cublas_soname();

// Opens `library` (a soname or a path) and resolves every entry point, or
// throws std::runtime_error with one line naming the library and what dlopen
// or dlsym said. The library stays open for the life of the process.
CublasLibrary open_cublas(const std::string& library);

// cublas_soname() opened once, at the first call. A failed open throws (as
// open_cublas does) and is tried again at the next call.
const CublasLibrary& cublas();

}  // namespace cfr::measure
