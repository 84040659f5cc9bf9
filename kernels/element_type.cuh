#pragma once

// The C++ type behind each DType, and the conversions every kernel needs:
// element <-> fp32 and a 16-byte chunk of elements -> fp32. Device code.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "roofline/core/dtype.hpp"

namespace cfr::kernels {

template <DType>
struct ElementTypeOf;
template <>
struct ElementTypeOf<DType::fp16> {
  using type = __half;
};
template <>
struct ElementTypeOf<DType::bf16> {
  using type = __nv_bfloat16;
};
template <>
struct ElementTypeOf<DType::fp32> {
  using type = float;
};

template <DType dtype>
using element_t = typename ElementTypeOf<dtype>::type;

__device__ __forceinline__ float to_float(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ __forceinline__ float to_float(float x) {
  return x;
}

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}

// Elements in one 16-byte global load (the widest single load).
template <typename T>
inline constexpr int elements_per_16_bytes = 16 / static_cast<int>(sizeof(T));

// Unpacks a 16-byte chunk of T into fp32.
template <typename T>
__device__ __forceinline__ void unpack_16_bytes(const uint4& raw, float (&out)[16 / sizeof(T)]) {
  if constexpr (std::is_same_v<T, float>) {
    out[0] = __uint_as_float(raw.x);
    out[1] = __uint_as_float(raw.y);
    out[2] = __uint_as_float(raw.z);
    out[3] = __uint_as_float(raw.w);
  } else {
    // Four packed pairs; the pair types are 4-byte aligned like the words.
    using Pair = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const Pair* pairs = reinterpret_cast<const Pair*>(&raw);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      float2 f;
      if constexpr (std::is_same_v<T, __half>) {
        f = __half22float2(pairs[w]);
      } else {
        f = __bfloat1622float2(pairs[w]);
      }
      out[2 * w] = f.x;
      out[2 * w + 1] = f.y;
    }
  }
}

// `Count` consecutive elements, aligned so that one store writes them all.
template <typename T, int Count>
struct alignas(sizeof(T) * Count) ElementVector {
  T value[Count];
};

// Converts `Count` fp32 values and writes them with one vector store; `dst`
// must be aligned to sizeof(T) * Count bytes.
template <typename T, int Count>
__device__ __forceinline__ void store_converted(T* dst, const float (&values)[Count]) {
  ElementVector<T, Count> out;
#pragma unroll
  for (int e = 0; e < Count; ++e) out.value[e] = from_float<T>(values[e]);
  *reinterpret_cast<ElementVector<T, Count>*>(dst) = out;
}

}  // namespace cfr::kernels
