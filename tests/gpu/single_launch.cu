// One launch per configuration, inside NVTX ranges that Nsight Compute can
// filter on: the data-collection prototype for `sweep --profile` (issue 10).
// Each configuration gets seeded inputs (outside the ranges), then
//   push "cfr_profile", push "cfr_row_<i>", <the kernel's launches>, pop, pop
// so `ncu --nvtx --nvtx-include cfr_profile/` profiles exactly the kernel's own
// launches (cuBLAS's included for naive) and the CSV's push/pop column names
// the row. A backward configuration runs its registry forward partner
// outside the ranges first, for O and LSE.
//
// usage: single_launch KERNEL:DTYPE:B:H:N:D:CAUSAL ...   (e.g. fa1_wmma:fp16:1:8:4096:64:1)

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace {

using namespace cfr;
using namespace cfr::kernels;
using measure::DeviceBuffer;
using measure::zeroed_workspace;

struct Config {
  std::string kernel;
  AttentionShape shape;
};

Config parse(const std::string& text) {
  Config c;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t colon; (colon = text.find(':', start)) != std::string::npos; start = colon + 1) {
    parts.push_back(text.substr(start, colon - start));
  }
  parts.push_back(text.substr(start));
  if (parts.size() != 7) throw std::runtime_error("expected KERNEL:DTYPE:B:H:N:D:CAUSAL: " + text);
  c.kernel = parts[0];
  c.shape.dtype = parts[1] == "fp16" ? DType::fp16 : parts[1] == "bf16" ? DType::bf16 : DType::fp32;
  c.shape.batch = std::stoi(parts[2]);
  c.shape.heads = std::stoi(parts[3]);
  c.shape.seq_len = std::stoi(parts[4]);
  c.shape.head_dim = std::stoi(parts[5]);
  c.shape.causal = parts[6] == "1";
  return c;
}

std::size_t elements(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len * s.head_dim;
}

void run(const Config& c, int index, cudaStream_t stream, cublasHandle_t cublas) {
  const AttentionShape& s = c.shape;
  const std::size_t bytes = elements(s) * element_bytes(s.dtype);
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads * s.seq_len;
  DeviceBuffer q(bytes), k(bytes), v(bytes), o(bytes), lse(rows * 4);
  CFR_CUDA_CHECK(fill_random(q.data(), elements(s), s.dtype, 11, Distribution::normal, stream));
  CFR_CUDA_CHECK(fill_random(k.data(), elements(s), s.dtype, 12, Distribution::normal, stream));
  CFR_CUDA_CHECK(fill_random(v.data(), elements(s), s.dtype, 13, Distribution::uniform, stream));
  char name[32];
  std::snprintf(name, sizeof name, "cfr_row_%d", index);
  const KernelEntry* entry = registry().find(c.kernel);
  if (entry == nullptr) throw std::runtime_error("unknown kernel " + c.kernel);
  const char* range = nullptr;
  if (const ForwardKernel* kernel = entry->forward()) {
    DeviceBuffer workspace = zeroed_workspace(kernel->workspace_bytes(s), stream);
    const ForwardBuffers io{q.data(), k.data(), v.data(), o.data(), lse.as<float>()};
    const LaunchContext context{stream, cublas, workspace.data(), workspace.bytes()};
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(name);
    CFR_CUDA_CHECK(kernel->launch(s, io, context));
    range = name;
  } else {
    const KernelEntry* partner = registry().forward_partner(*entry);
    if (partner == nullptr) throw std::runtime_error("no forward partner for " + c.kernel);
    const ForwardKernel* forward = partner->forward();
    const BackwardKernel* backward = entry->backward();
    DeviceBuffer d_o(bytes), d_q(bytes), d_k(bytes), d_v(bytes);
    DeviceBuffer workspace = zeroed_workspace(backward->workspace_bytes(s), stream);
    DeviceBuffer forward_workspace = zeroed_workspace(forward->workspace_bytes(s), stream);
    CFR_CUDA_CHECK(
        fill_random(d_o.data(), elements(s), s.dtype, 14, Distribution::uniform, stream));
    CFR_CUDA_CHECK(
        forward->launch(s, {q.data(), k.data(), v.data(), o.data(), lse.as<float>()},
                        {stream, cublas, forward_workspace.data(), forward_workspace.bytes()}));
    const BackwardBuffers io{q.data(),        k.data(),   v.data(),   o.data(),  d_o.data(),
                             lse.as<float>(), d_q.data(), d_k.data(), d_v.data()};
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(name);
    CFR_CUDA_CHECK(backward->launch(s, io, {stream, cublas, workspace.data(), workspace.bytes()}));
    range = name;
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  nvtxRangePop();
  nvtxRangePop();
  std::printf("row %d: %s ok (%s)\n", index, c.kernel.c_str(), range);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    measure::CudaStream stream;
    measure::CublasHandle cublas;
    CFR_CUBLAS_CHECK(measure::cublas().set_stream(cublas.get(), stream.get()));
    for (int i = 1; i < argc; ++i) run(parse(argv[i]), i - 1, stream.get(), cublas.get());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "single_launch: %s\n", error.what());
    return 1;
  }
  return 0;
}
