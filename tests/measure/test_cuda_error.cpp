// The CUDA macro family of the error rule (roofline/core/errors.hpp, rules 1
// and 2; kernels/measure/cuda_error.hpp) on a failing call, without a GPU: the
// "calls" below return a cudaError_t of our choosing, as a failing runtime
// call would.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/measure/cuda_error.hpp"

using namespace cfr::measure;

namespace {

// A stand-in for a runtime call: records that it ran, returns `result`.
cudaError_t fake_call(cudaError_t result, std::vector<cudaError_t>& ran) {
  ran.push_back(result);
  return result;
}

// Rule 2: a function that returns cudaError_t, its calls checked by the
// _NOEXCEPT variant.
cudaError_t three_calls(cudaError_t first, cudaError_t second, std::vector<cudaError_t>& ran) {
  CFR_CUDA_CHECK_NOEXCEPT(fake_call(first, ran));
  CFR_CUDA_CHECK_NOEXCEPT(fake_call(second, ran));
  CFR_CUDA_CHECK_NOEXCEPT(fake_call(cudaSuccess, ran));
  return cudaSuccess;
}

}  // namespace

TEST_CASE("CFR_CUDA_CHECK throws a CudaError with the code, the call and its call site") {
  std::vector<cudaError_t> ran;
  CHECK_NOTHROW(CFR_CUDA_CHECK(fake_call(cudaSuccess, ran)));
  try {
    CFR_CUDA_CHECK(fake_call(cudaErrorMemoryAllocation, ran));
    FAIL("no exception");
  } catch (const CudaError& error) {
    CHECK(error.code() == cudaErrorMemoryAllocation);
    CHECK(error.call() == "fake_call(cudaErrorMemoryAllocation, ran)");
    const std::string what = error.what();
    CHECK(what.starts_with("fake_call(cudaErrorMemoryAllocation, ran) failed at "));
    CHECK(what.find("test_cuda_error.cpp:") != std::string::npos);
    CHECK(what.ends_with(": cudaErrorMemoryAllocation (out of memory)"));
    CHECK(what.find('\n') == std::string::npos);
  }
  CHECK(ran.size() == 2);  // each call evaluated once
}

TEST_CASE("CFR_CUDA_CHECK_NOEXCEPT returns the first failing status and runs nothing after it") {
  std::vector<cudaError_t> ran;
  CHECK(three_calls(cudaSuccess, cudaSuccess, ran) == cudaSuccess);
  CHECK(ran.size() == 3);
  ran.clear();
  CHECK(three_calls(cudaSuccess, cudaErrorInvalidValue, ran) == cudaErrorInvalidValue);
  CHECK(ran == std::vector<cudaError_t>{cudaSuccess, cudaErrorInvalidValue});
  ran.clear();
  CHECK(three_calls(cudaErrorIllegalAddress, cudaErrorInvalidValue, ran) ==
        cudaErrorIllegalAddress);
  CHECK(ran.size() == 1);
}

TEST_CASE("a CUDA error reads as its name and the runtime's description") {
  CHECK(cuda_error_text(cudaErrorInvalidValue) == "cudaErrorInvalidValue (invalid argument)");
}
