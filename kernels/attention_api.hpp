#pragma once

// Host-side entry points of the attention kernels. Plain C++ callers (app/,
// tests) include this; the definitions live in the .cu file of each family.
// Layout of every tensor, contiguous: Q, O [batch, heads, seq_len, head_dim];
// K, V [batch, kv_heads, kv_len, head_dim], or paged (page_size > 0): pages
// [pages, kv_heads, page_size, head_dim] reached through ForwardBuffers'
// page table. seq_len is the query length.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "roofline/core/attention_problem.hpp"
#include "roofline/core/dtype.hpp"

namespace cfr::kernels {

struct AttentionShape {
  int batch = 1;
  int heads = 1;
  int seq_len = 1;  // query tokens
  int head_dim = 64;
  bool causal = false;  // bottom-right aligned when kv_len > seq_len
  DType dtype = DType::fp16;
  float softmax_scale = 0.f;  // 0 means 1/sqrt(head_dim)
  int kv_len = 0;             // 0: seq_len
  int kv_heads = 0;           // 0: heads; else a divisor of heads (GQA, MQA)
  int page_size = 0;          // 0: a contiguous K/V cache

  int keys() const { return kv_len > 0 ? kv_len : seq_len; }
  int key_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  // Whether K and V are what square self-attention has: as many heads and
  // tokens as Q, contiguous. The kernels that take nothing else refuse the rest.
  bool square() const { return keys() == seq_len && key_heads() == heads && page_size == 0; }
};

// The launch shape of a problem (the report's dimensions are 64-bit; a
// sweep bounds them to what an int holds).
inline AttentionShape shape_of(const AttentionProblem& p) {
  AttentionShape shape;
  shape.batch = static_cast<int>(p.batch);
  shape.heads = static_cast<int>(p.heads);
  shape.seq_len = static_cast<int>(p.seq_len);
  shape.head_dim = static_cast<int>(p.head_dim);
  shape.causal = p.causal;
  shape.dtype = p.dtype;
  shape.kv_len = static_cast<int>(p.keys());
  shape.kv_heads = static_cast<int>(p.key_heads());
  shape.page_size = static_cast<int>(p.page_size);
  return shape;
}

// The shape the reference is given for a paged problem: the same K/V read
// from the contiguous cache the pages were scattered from.
inline AttentionShape contiguous_cache(AttentionShape shape) {
  shape.page_size = 0;
  return shape;
}

// The problem of a launch shape: what the models and kv_splits.hpp take.
inline AttentionProblem problem_of(const AttentionShape& shape) {
  AttentionProblem p{shape.batch,    shape.heads,  shape.seq_len,
                     shape.head_dim, shape.causal, shape.dtype};
  p.kv_len = shape.keys();
  p.kv_heads = shape.key_heads();
  p.page_size = shape.page_size;
  return p;
}

struct ForwardBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // [batch, heads, seq_len], natural-log logsumexp of the scaled scores
  // A paged cache's [batch, pages_per_sequence] page indices; null otherwise.
  const int* page_table = nullptr;
  int pages_per_sequence = 0;
};

struct BackwardBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;
  void* d_q = nullptr;
  void* d_k = nullptr;
  void* d_v = nullptr;
};

// What a launch may use beyond its buffers. workspace must hold at least the
// kernel's workspace_bytes(shape) and be zero-filled when it is allocated for
// a shape; a launch leaves zero whatever of it must start at zero (fa2_decode
// counts its splits' arrivals there), so launches of one shape may reuse it.
struct LaunchContext {
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // Where a launch that fails may say why in its own words (a plugin's
  // message); the caller puts it in the row's reason. May be null.
  std::string* failure_message = nullptr;
};

// A kernel's launcher; kernels/kernel_registry.hpp pairs it with the
// kernel's description. The launch returns cudaSuccess or the first error (an
// unsupported shape returns cudaErrorInvalidValue without launching).
// std::function rather than function pointers: a plugin's launcher carries
// which of the plugin's kernels it calls (kernels/plugin/plugin_loader.cpp).
struct ForwardKernel {
  std::function<std::size_t(const AttentionShape&)> workspace_bytes;
  std::function<cudaError_t(const AttentionShape&, const ForwardBuffers&, const LaunchContext&)>
      launch;
};

struct BackwardKernel {
  std::function<std::size_t(const AttentionShape&)> workspace_bytes;
  std::function<cudaError_t(const AttentionShape&, const BackwardBuffers&, const LaunchContext&)>
      launch;
};

// The launcher of a registered kernel of that name and direction; null when
// there is none.
const ForwardKernel* find_forward_kernel(std::string_view name);
const BackwardKernel* find_backward_kernel(std::string_view name);

// The obvious reference: one CTA per output row, double sums, obviously
// right, slow (O(N d) per row on one CTA), never timed; the test oracle of
// the tiled references the sweep checks with (tiled_reference.hpp). Outputs
// are fp32 regardless of the input dtype. K and V are contiguous: a paged
// problem is checked with contiguous_cache(shape) over the cache its pages
// hold. Both take GQA and the bottom-right causal mask of Nq < Nk.
cudaError_t reference_forward(const AttentionShape&, const void* q, const void* k, const void* v,
                              float* o, float* lse, cudaStream_t stream);
cudaError_t reference_backward(const AttentionShape&, const void* q, const void* k, const void* v,
                               const void* d_o, float* d_q, float* d_k, float* d_v,
                               cudaStream_t stream);

}  // namespace cfr::kernels
