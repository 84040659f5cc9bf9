// The obvious reference: softmax attention, one CTA per output row, fp32
// products and double sums, written for obviousness rather than speed: the
// oracle the tiled references (tiled_reference.hpp), which the sweep checks
// with, are tested against. Every score is recomputed from Q and K in each
// pass instead of being stored, so any seq_len fits, but a row costs O(N d)
// on one CTA. Reads the I/O dtype, writes fp32.
//
// Forward, for query row i (keys j < Nk, or j <= i + Nk - Nq when causal;
// query head h reads K/V head h / (heads / kv_heads)):
//   s_j = scale * q_i . k_j,  m = max_j s_j,  l = sum_j exp(s_j - m)
//   O_i = sum_j exp(s_j - m) v_j / l,  L_i = m + log(l)
// Backward, with P_ij = exp(s_ij - L_i) and dP_ij = dO_i . v_j:
//   D_i = sum_j P_ij dP_ij,  dS_ij = P_ij (dP_ij - D_i)
//   dQ_i = scale sum_j dS_ij k_j,  dK_j = scale sum_i dS_ij q_i,  dV_j = sum_i P_ij dO_i
// with dK_j, dV_j summed over every query head of key j's head's group.

#include <cmath>

#include "kernels/attention_api.hpp"
#include "kernels/element_type.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/stream_ordered_buffer.hpp"

namespace cfr::kernels {
namespace {

constexpr int threads = 256;           // also the keys per chunk of the weighted sums
constexpr int max_head_dim = threads;  // one thread per output column
// The kernels below declare 4 CTAs per SM: that lets ptxas use 64 registers;
// left to itself it picked 32 and spilled.

__device__ float block_max(float value) {
  __shared__ float partial[threads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  __syncthreads();  // `partial` may still be read from a previous call
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
  __syncthreads();
  float result = partial[0];
  for (int w = 1; w < threads / 32; ++w) result = fmaxf(result, partial[w]);
  return result;
}

__device__ double block_sum(double value) {
  __shared__ double partial[threads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = value;
  __syncthreads();
  double result = 0;
  for (int w = 0; w < threads / 32; ++w) result += partial[w];
  return result;
}

// a (fp32, shared memory) . b (global, row of T).
template <typename T>
__device__ float dot(const float* a, const T* b, int head_dim) {
  float sum = 0.f;
  for (int n = 0; n < head_dim; ++n) sum = fmaf(a[n], to_float(b[n]), sum);
  return sum;
}

template <typename T>
__device__ void load_row(float* dst, const T* src, int head_dim, float scale) {
  for (int n = static_cast<int>(threadIdx.x); n < head_dim; n += threads) {
    dst[n] = to_float(src[n]) * scale;
  }
}

template <typename T>
__global__ void __launch_bounds__(threads, 4)
    reference_forward_rows(const T* __restrict__ q, const T* __restrict__ k,
                           const T* __restrict__ v, float* __restrict__ o, float* __restrict__ lse,
                           int seq_len, int kv_len, int group, int head_dim, bool causal,
                           float scale) {
  __shared__ float q_row[max_head_dim];
  __shared__ float weights[threads];
  const std::int64_t row = blockIdx.x;
  // Query head row / seq_len reads K/V head row / seq_len / group (GQA); the
  // causal mask is bottom-right aligned: query i sees keys up to
  // i + kv_len - seq_len.
  const std::int64_t kv_offset = row / seq_len / group * kv_len * head_dim;
  const int i = static_cast<int>(row % seq_len);
  const int t = static_cast<int>(threadIdx.x);
  const int keys = causal ? i + kv_len - seq_len + 1 : kv_len;
  const T* k_head = k + kv_offset;
  const T* v_head = v + kv_offset;

  load_row(q_row, q + row * head_dim, head_dim, scale);
  __syncthreads();

  float max = -INFINITY;
  for (int j = t; j < keys; j += threads)
    max = fmaxf(max, dot(q_row, k_head + j * head_dim, head_dim));
  max = block_max(max);

  double sum = 0;
  double out = 0;  // column t of O_i, unnormalized
  for (int first = 0; first < keys; first += threads) {
    const int j = first + t;
    const float weight = j < keys ? expf(dot(q_row, k_head + j * head_dim, head_dim) - max) : 0.f;
    weights[t] = weight;
    sum += weight;
    __syncthreads();
    if (t < head_dim) {
      float chunk = 0.f;
      const int count = min(threads, keys - first);
      for (int c = 0; c < count; ++c) {
        chunk = fmaf(weights[c], to_float(v_head[(first + c) * head_dim + t]), chunk);
      }
      out += chunk;
    }
    __syncthreads();
  }
  const double total = block_sum(sum);
  if (t < head_dim) o[row * head_dim + t] = static_cast<float>(out / total);
  if (t == 0) lse[row] = max + static_cast<float>(log(total));
}

// Backward, one CTA per query row: L_i, D_i and dQ_i.
template <typename T>
__global__ void __launch_bounds__(threads, 4)
    reference_backward_rows(const T* __restrict__ q, const T* __restrict__ k,
                            const T* __restrict__ v, const T* __restrict__ d_o,
                            float* __restrict__ d_q, float* __restrict__ lse,
                            float* __restrict__ d_rows, int seq_len, int kv_len, int group,
                            int head_dim, bool causal, float scale) {
  __shared__ float q_row[max_head_dim];
  __shared__ float do_row[max_head_dim];
  __shared__ float gradients[threads];
  const std::int64_t row = blockIdx.x;
  // K/V heads and the mask as in the forward.
  const std::int64_t kv_offset = row / seq_len / group * kv_len * head_dim;
  const int i = static_cast<int>(row % seq_len);
  const int t = static_cast<int>(threadIdx.x);
  const int keys = causal ? i + kv_len - seq_len + 1 : kv_len;
  const T* k_head = k + kv_offset;
  const T* v_head = v + kv_offset;

  load_row(q_row, q + row * head_dim, head_dim, scale);
  load_row(do_row, d_o + row * head_dim, head_dim, 1.f);
  __syncthreads();

  float max = -INFINITY;
  for (int j = t; j < keys; j += threads)
    max = fmaxf(max, dot(q_row, k_head + j * head_dim, head_dim));
  max = block_max(max);
  double sum = 0;
  for (int j = t; j < keys; j += threads)
    sum += expf(dot(q_row, k_head + j * head_dim, head_dim) - max);
  const float row_lse = max + static_cast<float>(log(block_sum(sum)));

  double weighted = 0;
  for (int j = t; j < keys; j += threads) {
    const float p = expf(dot(q_row, k_head + j * head_dim, head_dim) - row_lse);
    weighted += static_cast<double>(p) * dot(do_row, v_head + j * head_dim, head_dim);
  }
  const auto row_d = static_cast<float>(block_sum(weighted));

  double out = 0;  // column t of dQ_i / scale
  for (int first = 0; first < keys; first += threads) {
    const int j = first + t;
    float gradient = 0.f;
    if (j < keys) {
      const float p = expf(dot(q_row, k_head + j * head_dim, head_dim) - row_lse);
      gradient = p * (dot(do_row, v_head + j * head_dim, head_dim) - row_d);
    }
    gradients[t] = gradient;
    __syncthreads();
    if (t < head_dim) {
      float chunk = 0.f;
      const int count = min(threads, keys - first);
      for (int c = 0; c < count; ++c) {
        chunk = fmaf(gradients[c], to_float(k_head[(first + c) * head_dim + t]), chunk);
      }
      out += chunk;
    }
    __syncthreads();
  }
  if (t < head_dim) d_q[row * head_dim + t] = static_cast<float>(out * scale);
  if (t == 0) {
    lse[row] = row_lse;
    d_rows[row] = row_d;
  }
}

// Backward, one CTA per key row j of a K/V head: dK_j and dV_j over the
// queries that see it, in every query head of the head's group.
template <typename T>
__global__ void __launch_bounds__(threads, 4)
    reference_backward_columns(const T* __restrict__ q, const T* __restrict__ k,
                               const T* __restrict__ v, const T* __restrict__ d_o,
                               const float* __restrict__ lse, const float* __restrict__ d_rows,
                               float* __restrict__ d_k, float* __restrict__ d_v, int seq_len,
                               int kv_len, int group, int head_dim, bool causal, float scale) {
  __shared__ float k_row[max_head_dim];
  __shared__ float v_row[max_head_dim];
  __shared__ float weights[threads];
  __shared__ float gradients[threads];
  const std::int64_t column = blockIdx.x;
  const std::int64_t kv_head = column / kv_len;
  const int j = static_cast<int>(column % kv_len);
  const int t = static_cast<int>(threadIdx.x);
  // Query i sees key j when j <= i + kv_len - seq_len.
  const int first_query = causal ? max(0, j - (kv_len - seq_len)) : 0;

  load_row(k_row, k + column * head_dim, head_dim, scale);
  load_row(v_row, v + column * head_dim, head_dim, 1.f);
  __syncthreads();

  double dk = 0;
  double dv = 0;
  for (std::int64_t head = kv_head * group; head < (kv_head + 1) * group; ++head) {
    const T* q_head = q + head * seq_len * head_dim;
    const T* do_head = d_o + head * seq_len * head_dim;
    const float* lse_head = lse + head * seq_len;
    const float* d_head = d_rows + head * seq_len;
    for (int first = first_query; first < seq_len; first += threads) {
      const int i = first + t;
      float weight = 0.f;
      float gradient = 0.f;
      if (i < seq_len) {
        weight = expf(dot(k_row, q_head + static_cast<std::int64_t>(i) * head_dim, head_dim) -
                      lse_head[i]);
        gradient =
            weight *
            (dot(v_row, do_head + static_cast<std::int64_t>(i) * head_dim, head_dim) - d_head[i]);
      }
      weights[t] = weight;
      gradients[t] = gradient;
      __syncthreads();
      if (t < head_dim) {
        float dk_chunk = 0.f;
        float dv_chunk = 0.f;
        const int count = min(threads, seq_len - first);
        for (int c = 0; c < count; ++c) {
          const std::int64_t at = static_cast<std::int64_t>(first + c) * head_dim + t;
          dk_chunk = fmaf(gradients[c], to_float(q_head[at]), dk_chunk);
          dv_chunk = fmaf(weights[c], to_float(do_head[at]), dv_chunk);
        }
        dk += dk_chunk;
        dv += dv_chunk;
      }
      __syncthreads();
    }
  }
  if (t < head_dim) {
    d_k[column * head_dim + t] = static_cast<float>(dk * scale);
    d_v[column * head_dim + t] = static_cast<float>(dv);
  }
}

constexpr DTypeSet every_dtype{.fp16 = true, .bf16 = true, .fp32 = true};

// Both read a contiguous cache (a sweep keeps one beside its pages).
bool reference_supports(const AttentionShape& shape) {
  return has_positive_dimensions(shape) && shape.head_dim <= max_head_dim && shape.page_size == 0 &&
         shape.heads % shape.key_heads() == 0 && (!shape.causal || shape.seq_len <= shape.keys());
}

unsigned rows_of(const AttentionShape& shape) {
  return static_cast<unsigned>(heads_total(shape) * static_cast<std::size_t>(shape.seq_len));
}

}  // namespace

cudaError_t reference_forward(const AttentionShape& shape, const void* q, const void* k,
                              const void* v, float* o, float* lse, cudaStream_t stream) {
  if (!reference_supports(shape) || q == nullptr || k == nullptr || v == nullptr || o == nullptr ||
      lse == nullptr) {
    return cudaErrorInvalidValue;
  }
  return with_element_type<every_dtype>(shape.dtype, [&]<typename T>() {
    reference_forward_rows<T><<<rows_of(shape), threads, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), o, lse,
        shape.seq_len, shape.keys(), shape.heads / shape.key_heads(), shape.head_dim, shape.causal,
        softmax_scale_of(shape));
    return cudaGetLastError();
  });
}

cudaError_t reference_backward(const AttentionShape& shape, const void* q, const void* k,
                               const void* v, const void* d_o, float* d_q, float* d_k, float* d_v,
                               cudaStream_t stream) {
  if (!reference_supports(shape) || q == nullptr || k == nullptr || v == nullptr ||
      d_o == nullptr || d_q == nullptr || d_k == nullptr || d_v == nullptr) {
    return cudaErrorInvalidValue;
  }
  // L and D of every row, recomputed here: the reference depends on no
  // forward output.
  const std::size_t rows = rows_of(shape);
  StreamOrderedBuffer row_stats(2 * rows * sizeof(float), stream);
  CFR_CUDA_CHECK_NOEXCEPT(row_stats.status());
  float* lse = row_stats.as<float>();
  float* d_rows = lse + rows;
  return with_element_type<every_dtype>(shape.dtype, [&]<typename T>() {
    const auto* q_t = static_cast<const T*>(q);
    const auto* k_t = static_cast<const T*>(k);
    const auto* v_t = static_cast<const T*>(v);
    const auto* do_t = static_cast<const T*>(d_o);
    const float scale = softmax_scale_of(shape);
    const int group = shape.heads / shape.key_heads();
    reference_backward_rows<T><<<rows_of(shape), threads, 0, stream>>>(
        q_t, k_t, v_t, do_t, d_q, lse, d_rows, shape.seq_len, shape.keys(), group, shape.head_dim,
        shape.causal, scale);
    CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());
    const auto key_rows = static_cast<unsigned>(static_cast<std::size_t>(shape.batch) *
                                                static_cast<std::size_t>(shape.key_heads()) *
                                                static_cast<std::size_t>(shape.keys()));
    reference_backward_columns<T><<<key_rows, threads, 0, stream>>>(
        q_t, k_t, v_t, do_t, lse, d_rows, d_k, d_v, shape.seq_len, shape.keys(), group,
        shape.head_dim, shape.causal, scale);
    return cudaGetLastError();
  });
}

}  // namespace cfr::kernels
