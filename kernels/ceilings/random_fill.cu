#include "kernels/ceilings/random_fill.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace cfr::ceilings::detail {
namespace {

// A 64-bit mixer (splitmix64's finalizer): independent-looking words per index.
__device__ std::uint32_t hash(std::uint64_t index, std::uint32_t seed) {
  std::uint64_t z = index + 0x9e3779b97f4a7c15ull * (seed + 1ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
}

__device__ float uniform_pm1(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>(hash(index, seed) >> 8) * (2.f / 16777216.f) - 1.f;
}

__device__ void store(__half* data, std::size_t i, float value) {
  data[i] = __float2half(value);
}
__device__ void store(__nv_bfloat16* data, std::size_t i, float value) {
  data[i] = __float2bfloat16(value);
}
__device__ void store(float* data, std::size_t i, float value) {
  data[i] = value;
}

__global__ void fill_words(std::uint32_t* data, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = hash(i, seed);
  }
}

template <typename T>
__global__ void fill_values(T* data, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    store(data, i, uniform_pm1(i, seed));
  }
}

constexpr int fill_threads = 256;
constexpr int fill_blocks = 4096;  // grid-stride covers any size

}  // namespace

cudaError_t fill_random_words(void* data, std::size_t bytes, std::uint32_t seed,
                              cudaStream_t stream) {
  fill_words<<<fill_blocks, fill_threads, 0, stream>>>(static_cast<std::uint32_t*>(data),
                                                       bytes / sizeof(std::uint32_t), seed);
  return cudaGetLastError();
}

cudaError_t fill_random_values(void* data, std::size_t count, DType dtype, std::uint32_t seed,
                               cudaStream_t stream) {
  switch (dtype) {
    case DType::fp16:
      fill_values<<<fill_blocks, fill_threads, 0, stream>>>(static_cast<__half*>(data), count,
                                                            seed);
      break;
    case DType::bf16:
      fill_values<<<fill_blocks, fill_threads, 0, stream>>>(static_cast<__nv_bfloat16*>(data),
                                                            count, seed);
      break;
    case DType::fp32:
      fill_values<<<fill_blocks, fill_threads, 0, stream>>>(static_cast<float*>(data), count, seed);
      break;
  }
  return cudaGetLastError();
}

}  // namespace cfr::ceilings::detail
