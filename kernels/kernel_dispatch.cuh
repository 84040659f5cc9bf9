#pragma once

// The one place that turns a runtime (dtype, head_dim) into a template
// instantiation <T, HeadDim>, limited to what the kernel's catalog entry
// declares: an undeclared dtype or head dim is never instantiated (a kernel
// with head dim 256 makes no other kernel instantiate 256), an unsupported
// shape returns cudaErrorInvalidValue before anything is launched. Host code
// of the .cu launchers. It also checks, while each kernel .cu file compiles,
// that kernels/meson.build built it only for architectures its catalog entry
// allows.

#include <cmath>
#include <cstddef>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention_api.hpp"
#include "kernels/built_kernels.hpp"
#include "kernels/softmax_constants.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr::kernels {

inline bool has_positive_dimensions(const AttentionShape& shape) {
  return shape.batch > 0 && shape.heads > 0 && shape.seq_len > 0 && shape.head_dim > 0 &&
         shape.kv_len >= 0 && shape.kv_heads >= 0 && shape.page_size >= 0;
}

// Whether `kernel` computes this shape (its ShapeSupport), and the shape is
// one: heads a multiple of kv_heads, a causal mask with no more queries than
// keys (bottom-right aligned).
inline bool takes_shape(const KernelDescription& kernel, const AttentionShape& shape) {
  const ShapeSupport& can = kernel.shapes;
  return shape.heads % shape.key_heads() == 0 && (!shape.causal || shape.seq_len <= shape.keys()) &&
         (shape.keys() == shape.seq_len || can.kv_len) &&
         (shape.key_heads() == shape.heads || can.kv_heads) &&
         (shape.page_size == 0 || can.paged) &&
         (can.max_q_len == 0 || shape.seq_len <= can.max_q_len);
}

// softmax_scale == 0 selects the usual 1/sqrt(head_dim).
inline float softmax_scale_of(const AttentionShape& shape) {
  return shape.softmax_scale != 0.f ? shape.softmax_scale
                                    : 1.f / std::sqrt(static_cast<float>(shape.head_dim));
}

// The scale with log2(e) folded in: scores times this are ready for exp2.
inline float softmax_scale_log2_of(const AttentionShape& shape) {
  return softmax_scale_of(shape) * log2_e;
}

// [batch, heads] pairs, each one [seq_len, head_dim] matrix.
inline std::size_t heads_total(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads);
}

inline std::size_t elements_per_tensor(const AttentionShape& shape) {
  return heads_total(shape) * static_cast<std::size_t>(shape.seq_len) *
         static_cast<std::size_t>(shape.head_dim);
}

// Calls body.template operator()<T>() for the element type of `dtype`.
template <DTypeSet dtypes, typename Body>
cudaError_t with_element_type(DType dtype, Body&& body) {
  if constexpr (dtypes.fp16) {
    if (dtype == DType::fp16) return body.template operator()<__half>();
  }
  if constexpr (dtypes.bf16) {
    if (dtype == DType::bf16) return body.template operator()<__nv_bfloat16>();
  }
  if constexpr (dtypes.fp32) {
    if (dtype == DType::fp32) return body.template operator()<float>();
  }
  return cudaErrorInvalidValue;
}

template <const KernelDescription& kernel, typename Body, std::size_t... index>
cudaError_t with_head_dim_from(int head_dim, Body& body, std::index_sequence<index...>) {
  cudaError_t status = cudaErrorInvalidValue;
  (void)((head_dim == kernel.head_dims[index]
              ? (status = body.template operator()<kernel.head_dims[index]>(), true)
              : false) ||
         ...);
  return status;
}

// Calls body.template operator()<HeadDim>() for a head dim of `kernel`.
template <const KernelDescription& kernel, typename Body>
cudaError_t with_head_dim(int head_dim, Body&& body) {
  return with_head_dim_from<kernel>(head_dim, body,
                                    std::make_index_sequence<kernel.head_dims.size()>{});
}

// The config `kernel` runs with at `head_dim`, for a kernel whose config
// does not change with the architecture: a rule for newer GPUs would need the
// launcher to choose by the device's compute capability, which this refuses
// to hide.
template <const KernelDescription& kernel, int head_dim>
constexpr KernelConfig arch_independent_config() {
  static_assert(kernel.config_independent_of_arch(head_dim),
                "the catalog gives this head dim another config on newer GPUs: choose it by the "
                "device's compute capability in the launcher");
  return kernel.config_for(head_dim, kernel.min_compute_capability);
}

// The configs `kernel` runs with at `head_dim`, one per config rule: the one
// a GPU of that rule's minimum compute capability gets (several rules may
// give the same one; they instantiate once).
template <const KernelDescription& kernel, int head_dim, std::size_t rule>
constexpr KernelConfig config_of_rule() {
  return kernel.config_for(head_dim, kernel.configs[rule].min_cc);
}

template <const KernelDescription& kernel, int head_dim, typename Body, std::size_t... rule>
cudaError_t with_config_of_rules(const KernelConfig& wanted, Body& body,
                                 std::index_sequence<rule...>) {
  cudaError_t status = cudaErrorInvalidValue;
  (void)((wanted == config_of_rule<kernel, head_dim, rule>()
              ? (status = body.template operator()<config_of_rule<kernel, head_dim, rule>()>(),
                 true)
              : false) ||
         ...);
  return status;
}

// Calls body.template operator()<KernelConfig>() with the config the catalog
// gives `kernel` at `head_dim` on a GPU of compute capability `cc`: every
// config of its rules is instantiated, the device's is launched, so a rule for
// some architectures (a smaller tile where shared memory is smaller) needs no
// code of its own.
template <const KernelDescription& kernel, int head_dim, typename Body>
cudaError_t with_config_for(ComputeCapability cc, Body&& body) {
  return with_config_of_rules<kernel, head_dim>(kernel.config_for(head_dim, cc), body,
                                                std::make_index_sequence<kernel.configs.size()>{});
}

// Validates the shape against `kernel` and calls
// launch.template operator()<T, HeadDim>().
template <const KernelDescription& kernel, typename Launch>
cudaError_t dispatch_dtype_and_head_dim(const AttentionShape& shape, Launch&& launch) {
#ifndef CFR_KERNEL_MIN_ARCH
  static_assert(sizeof(Launch) == 0,
                "a kernel .cu file built outside kernels/meson.build's attention_kernels list");
#else
  static_assert(kernel.min_compute_capability.number() == CFR_KERNEL_MIN_ARCH,
                "kernels/meson.build's min_arch for this file differs from its catalog entry");
#endif
#ifdef __CUDA_ARCH__
  static_assert(__CUDA_ARCH__ >= kernel.min_compute_capability.number() * 10,
                "compiled for an architecture older than the catalog entry's minimum");
#endif
  if (!has_positive_dimensions(shape) || !takes_shape(kernel, shape) ||
      !kernel.supports_head_dim(shape.head_dim) || !kernel.dtypes.contains(shape.dtype)) {
    return cudaErrorInvalidValue;
  }
  return with_element_type<kernel.dtypes>(shape.dtype, [&]<typename T>() {
    return with_head_dim<kernel>(
        shape.head_dim, [&]<int head_dim>() { return launch.template operator()<T, head_dim>(); });
  });
}

}  // namespace cfr::kernels
