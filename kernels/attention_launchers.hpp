#pragma once

// The launch and workspace functions of each kernel family, one pair per
// .cu file; kernel_registry.cu puts them in the tables behind
// find_forward_kernel / find_backward_kernel. Internal to kernels/.

#include <cstddef>
#include <cstdint>

#include "kernels/attention_api.hpp"

namespace cfr::kernels {

std::size_t no_workspace(const AttentionShape&);

// naive_attention.cu: S and P of every head, each in the I/O dtype.
std::size_t naive_workspace_bytes(const AttentionShape& shape);
cudaError_t launch_naive(const AttentionShape& shape, const ForwardBuffers& io,
                         const LaunchContext& context);

// fa1_scalar.cu
cudaError_t launch_fa1_scalar(const AttentionShape& shape, const ForwardBuffers& io,
                              const LaunchContext& context);

// fa1_wmma.cu
cudaError_t launch_fa1_wmma(const AttentionShape& shape, const ForwardBuffers& io,
                            const LaunchContext& context);

// fa1_backward.cu: D = rowsum(dO * O), one fp32 per row.
std::size_t fa1_backward_workspace_bytes(const AttentionShape& shape);
cudaError_t launch_fa1_backward(const AttentionShape& shape, const BackwardBuffers& io,
                                const LaunchContext& context);

// Every pointer the kernels read with 16-byte loads must be 16-byte aligned
// (cudaMalloc gives 256); an offset view that is not is refused.
inline bool aligned_16(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0;
}

inline bool forward_buffers_usable(const ForwardBuffers& io) {
  return io.q != nullptr && io.k != nullptr && io.v != nullptr && io.o != nullptr &&
         io.lse != nullptr && aligned_16(io.q) && aligned_16(io.k) && aligned_16(io.v) &&
         aligned_16(io.o);
}

inline bool backward_buffers_usable(const BackwardBuffers& io) {
  const void* tensors[] = {io.q, io.k, io.v, io.o, io.d_o, io.d_q, io.d_k, io.d_v};
  for (const void* tensor : tensors) {
    if (tensor == nullptr || !aligned_16(tensor)) return false;
  }
  return io.lse != nullptr;
}

}  // namespace cfr::kernels
