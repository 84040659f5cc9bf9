#pragma once

// What the launchers check of the buffers they are given. Internal to
// kernels/.

#include <cstdint>

#include "kernels/attention_api.hpp"

namespace cfr::kernels {

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
