// An example cuflash-roofline plugin (docs/plugins.md): one forward attention
// kernel of its own, written against the plugin header alone, the way a
// kernel from outside this repository would be.
//
// The kernel is the plainest tiled forward there is: one thread per query
// row, Br = 64 rows per CTA; K and V stream through shared memory Bc = 32 rows
// at a time, in fp32, and each thread keeps its row's running max, sum and
// output in registers (online softmax, natural exp). Every Q block loads all
// the K/V rows it needs once, so its HBM traffic is the kv_reload model with
// tile 64 x 32; its FLOPs are fp32 FMAs on the CUDA cores (SIMT).
//
// It takes two of the served shapes of ABI version 3 (CFR_SHAPE_KV_LEN,
// CFR_SHAPE_GQA): more keys than queries (a KV cache, with the bottom-right
// causal mask) and fewer K/V heads than query heads, each query head reading
// its group's K/V head. Not a paged cache.
//
// Built with -DCFR_EXAMPLE_WRONG_SCALE it becomes `example_wrong_scale`, which
// applies half the softmax scale: the tests' proof that the tool's
// correctness check fails a plugin kernel that is wrong.
//
// Built with -DCFR_EXAMPLE_OWN_BYTES it becomes `example_own_bytes`
// (libcfr_example_bytes_plugin.so): the same kernel, which counts its own HBM
// bytes through hbm_bytes (traffic model "plugin", since ABI version 2) instead of
// naming kv_reload. It counts what the loop below loads, block by block, so
// its rows must carry the bytes kv_reload gives for tile 64 x 32: the tests'
// check that the tool uses a kernel's own count.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>

#include "kernels/plugin/cuflash_roofline_plugin.h"

namespace {

constexpr int block_rows = 64;  // Br: query rows per CTA, one per thread
constexpr int block_keys = 32;  // Bc: K/V rows per step through shared memory

__device__ float to_float(__half x) {
  return __half2float(x);
}
__device__ float to_float(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__device__ float to_float(float x) {
  return x;
}
template <typename T>
__device__ T from_float(float x);
template <>
__device__ __half from_float<__half>(float x) {
  return __float2half(x);
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ float from_float<float>(float x) {
  return x;
}

// blockIdx.y is batch * heads + query head; with `group` query heads per K/V
// head, blockIdx.y / group is batch * kv_heads + its K/V head.
template <typename T, int head_dim>
__global__ void __launch_bounds__(block_rows)
    example_forward(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                    T* __restrict__ o, float* __restrict__ lse, int seq_len, int kv_len, int group,
                    float scale, int causal) {
  __shared__ float k_tile[block_keys][head_dim];
  __shared__ float v_tile[block_keys][head_dim];
  const long long head_offset = static_cast<long long>(blockIdx.y) * seq_len * head_dim;
  const long long kv_offset = static_cast<long long>(blockIdx.y / group) * kv_len * head_dim;
  const int row = blockIdx.x * block_rows + threadIdx.x;
  const int shift = kv_len - seq_len;  // causal: row r sees keys 0 .. r + shift
  const bool active = row < seq_len;

  // Unrolled loops over c keep q_row and out in registers where they fit.
  float q_row[head_dim];
  float out[head_dim];
#pragma unroll
  for (int c = 0; c < head_dim; ++c) {
    q_row[c] = active ? to_float(q[head_offset + static_cast<long long>(row) * head_dim + c]) : 0.f;
    out[c] = 0.f;
  }
  float row_max = -INFINITY;
  float row_sum = 0.f;

  // Causal: the keys of this block's last row are the last ones it needs.
  const int last_row = min(seq_len, (blockIdx.x + 1) * block_rows) - 1;
  const int keys = causal ? last_row + 1 + shift : kv_len;
  for (int first_key = 0; first_key < keys; first_key += block_keys) {
    for (int i = threadIdx.x; i < block_keys * head_dim; i += block_rows) {
      const int key = first_key + i / head_dim;
      const long long at = kv_offset + static_cast<long long>(key) * head_dim + i % head_dim;
      k_tile[i / head_dim][i % head_dim] = key < kv_len ? to_float(k[at]) : 0.f;
      v_tile[i / head_dim][i % head_dim] = key < kv_len ? to_float(v[at]) : 0.f;
    }
    __syncthreads();
    for (int j = 0; j < block_keys && active; ++j) {
      const int key = first_key + j;
      if (key >= kv_len || (causal && key > row + shift)) break;
      float score = 0.f;
#pragma unroll
      for (int c = 0; c < head_dim; ++c) score += q_row[c] * k_tile[j][c];
      score *= scale;
      const float new_max = fmaxf(row_max, score);
      const float rescale = expf(row_max - new_max);
      const float p = expf(score - new_max);
      row_sum = row_sum * rescale + p;
#pragma unroll
      for (int c = 0; c < head_dim; ++c) out[c] = out[c] * rescale + p * v_tile[j][c];
      row_max = new_max;
    }
    __syncthreads();
  }
  if (!active) return;
  for (int c = 0; c < head_dim; ++c) {
    o[head_offset + static_cast<long long>(row) * head_dim + c] = from_float<T>(out[c] / row_sum);
  }
  lse[static_cast<long long>(blockIdx.y) * seq_len + row] = row_max + logf(row_sum);
}

template <typename T, int head_dim>
cudaError_t launch(const cfr_shape& shape, const cfr_forward_args& args, float scale) {
  const dim3 grid((shape.seq_len + block_rows - 1) / block_rows, shape.batch * shape.heads);
  example_forward<T, head_dim><<<grid, block_rows, 0, static_cast<cudaStream_t>(args.stream)>>>(
      static_cast<const T*>(args.q), static_cast<const T*>(args.k), static_cast<const T*>(args.v),
      static_cast<T*>(args.o), args.lse, shape.seq_len, shape.kv_len, shape.heads / shape.kv_heads,
      scale, shape.causal);
  return cudaGetLastError();
}

template <int head_dim>
cudaError_t launch_head_dim(const cfr_shape& shape, const cfr_forward_args& args, float scale) {
  switch (shape.dtype) {
    case CFR_DTYPE_FP16: return launch<__half, head_dim>(shape, args, scale);
    case CFR_DTYPE_BF16: return launch<__nv_bfloat16, head_dim>(shape, args, scale);
    default: return launch<float, head_dim>(shape, args, scale);
  }
}

int example_launch(const cfr_shape* shape, const cfr_forward_args* args, char* message,
                   size_t message_capacity) {
  if (shape->head_dim != 64 && shape->head_dim != 128) {
    std::snprintf(message, message_capacity, "head dim %d: this kernel has 64 and 128",
                  shape->head_dim);
    return CFR_ERROR;
  }
  if (shape->page_size != 0) {  // never asked: the description has no CFR_SHAPE_PAGED
    std::snprintf(message, message_capacity, "pages of %d tokens: this kernel reads K/V whole",
                  shape->page_size);
    return CFR_ERROR;
  }
#ifdef CFR_EXAMPLE_WRONG_SCALE
  const float scale = 0.5f * shape->softmax_scale;  // deliberately wrong
#else
  const float scale = shape->softmax_scale;
#endif
  const cudaError_t error = shape->head_dim == 64 ? launch_head_dim<64>(*shape, *args, scale)
                                                  : launch_head_dim<128>(*shape, *args, scale);
  if (error != cudaSuccess) {
    std::snprintf(message, message_capacity, "kernel launch: %s (%s)", cudaGetErrorName(error),
                  cudaGetErrorString(error));
    return CFR_ERROR;
  }
  return CFR_OK;
}

#ifdef CFR_EXAMPLE_OWN_BYTES
// What example_forward moves for one shape: each query head reads its Q rows
// and writes its O rows and LSE once, and each Q block reads the K and V rows
// of the key blocks it visits (all of them, or up to its last row's last key
// when causal; never a row past kv_len). Every query head reads its K/V head
// again: kv_reload's count, GQA or not.
int example_hbm_bytes(const cfr_shape* shape, double* bytes, char* message,
                      size_t message_capacity) {
  if (shape->seq_len <= 0 || shape->kv_len <= 0 || shape->head_dim <= 0) {
    std::snprintf(message, message_capacity, "seq_len %d, kv_len %d, head dim %d: no such shape",
                  shape->seq_len, shape->kv_len, shape->head_dim);
    return CFR_ERROR;
  }
  const double element = shape->dtype == CFR_DTYPE_FP32 ? 4.0 : 2.0;
  const double row = element * shape->head_dim;
  const int shift = shape->kv_len - shape->seq_len;
  double kv_rows = 0;  // K (and V) rows one query head reads, over its Q blocks
  for (int first_row = 0; first_row < shape->seq_len; first_row += block_rows) {
    const int last_row =
        first_row + block_rows < shape->seq_len ? first_row + block_rows - 1 : shape->seq_len - 1;
    const int keys = shape->causal ? last_row + 1 + shift : shape->kv_len;
    const int steps = (keys + block_keys - 1) / block_keys;
    const int loaded = steps * block_keys;
    kv_rows += loaded < shape->kv_len ? loaded : shape->kv_len;
  }
  const double per_head = 2.0 * shape->seq_len * row  // Q read, O written
                          + 2.0 * kv_rows * row       // K and V read
                          + 4.0 * shape->seq_len;     // LSE written (fp32)
  *bytes = per_head * shape->batch * shape->heads;
  return CFR_OK;
}
#endif

constexpr cfr_tile tiles[] = {{64, block_rows, block_keys}, {128, block_rows, block_keys}};

#if defined(CFR_EXAMPLE_WRONG_SCALE)
constexpr const char* kernel_name = "example_wrong_scale";
constexpr const char* kernel_summary = "example_simt with half the softmax scale (a test)";
#elif defined(CFR_EXAMPLE_OWN_BYTES)
constexpr const char* kernel_name = "example_own_bytes";
constexpr const char* kernel_summary = "example_simt counting its own HBM bytes (hbm_bytes)";
#else
constexpr const char* kernel_name = "example_simt";
constexpr const char* kernel_summary =
    "example plugin: one thread per query row, K/V tiles in shared memory, fp32 SIMT";
#endif

const cfr_kernel_description descriptions[] = {{
    .name = kernel_name,
    .version = "1.0.0",
    .direction = CFR_FORWARD,
    .dtypes = CFR_DTYPE_FP16 | CFR_DTYPE_BF16 | CFR_DTYPE_FP32,
    .tiles = tiles,
    .tile_count = 2,
    .compute_unit = CFR_COMPUTE_SIMT,
#ifdef CFR_EXAMPLE_OWN_BYTES
    .traffic_model = CFR_TRAFFIC_PLUGIN,
#else
    .traffic_model = "kv_reload",
#endif
    .min_cc_major = 7,
    .min_cc_minor = 0,
    .workspace_bytes = nullptr,
    .forward = example_launch,
    .backward = nullptr,
    .forward_partner = nullptr,
    .summary = kernel_summary,
#ifdef CFR_EXAMPLE_OWN_BYTES
    .hbm_bytes = example_hbm_bytes,
#else
    .hbm_bytes = nullptr,
#endif
    .shapes = CFR_SHAPE_KV_LEN | CFR_SHAPE_GQA,
    .max_q_len = 0,
}};

const cfr_plugin plugin = {CFR_PLUGIN_ABI_VERSION, descriptions, 1};

}  // namespace

extern "C" __attribute__((visibility("default"))) const cfr_plugin* cfr_plugin_kernels(void) {
  return &plugin;
}
