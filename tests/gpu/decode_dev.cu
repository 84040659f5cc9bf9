// fa2_decode variants checked and timed side by side (METHOD.md: one script
// builds, checks and times several variants). Each variant is first checked
// against an fp32 reference of its own (one CTA per query row, the cache read
// in its contiguous logical layout, so a page-table bug cannot hide in both),
// on ragged lengths, both masks and both cache layouts; only a variant that
// passes is timed, cold (L2 flushed before every sample). Bytes are Q + K + V
// + O once, the bandwidth the issue's table states. Not a test and not part
// of a report: it picks what kernels/fa2_decode.cu registers
// (docs/perf-notes.md records the runs).
//
// usage: decode_dev [filter]

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/fa2_decode.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"
#include "tests/gpu/variant_tool.cuh"

namespace {

using namespace cfr;
using namespace cfr::kernels;
using gpu_tools::median;
using gpu_tools::time_cold;
using measure::DeviceBuffer;

struct Shape {
  int batch, heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  DType dtype;
  int page_size;  // 0: contiguous
  bool pages_in_order = false;
};

__host__ __device__ std::size_t q_elements(const Shape& s) {
  return std::size_t(s.batch) * s.heads * s.q_len * s.head_dim;
}
__host__ __device__ std::size_t kv_elements(const Shape& s) {
  return std::size_t(s.batch) * s.kv_heads * s.kv_len * s.head_dim;
}
std::size_t q_rows(const Shape& s) {
  return std::size_t(s.batch) * s.heads * s.q_len;
}

// fp32 reference: one CTA of 128 threads per query row; keys in chunks of
// 128, one score per thread, then thread t accumulates dim t.
template <typename T>
__global__ void reference_rows(const T* q, const T* k, const T* v, float* o, float* lse, Shape s,
                               float scale) {
  const int row = blockIdx.x;  // [batch, head, token]
  const int token = row % s.q_len;
  const int head = (row / s.q_len) % s.heads;
  const int batch = row / (s.q_len * s.heads);
  const int kv_head = head / (s.heads / s.kv_heads);
  const T* qrow = q + std::int64_t(row) * s.head_dim;
  const T* kbase = k + (std::int64_t(batch) * s.kv_heads + kv_head) * s.kv_len * s.head_dim;
  const T* vbase = v + (std::int64_t(batch) * s.kv_heads + kv_head) * s.kv_len * s.head_dim;
  const int last = s.causal ? token + s.kv_len - s.q_len : s.kv_len - 1;
  __shared__ float scores[128];
  __shared__ float reduce[128];
  float m = -INFINITY, l = 0.f, acc = 0.f;
  const int t = threadIdx.x;
  for (int c0 = 0; c0 <= last; c0 += 128) {
    const int key = c0 + t;
    float sc = -INFINITY;
    if (key <= last) {
      float dot = 0.f;
      for (int d = 0; d < s.head_dim; ++d)
        dot += float(qrow[d]) * float(kbase[std::int64_t(key) * s.head_dim + d]);
      sc = dot * scale;
    }
    scores[t] = sc;
    reduce[t] = sc;
    __syncthreads();
    for (int w = 64; w > 0; w /= 2) {
      if (t < w) reduce[t] = fmaxf(reduce[t], reduce[t + w]);
      __syncthreads();
    }
    const float new_m = fmaxf(m, reduce[0]);
    __syncthreads();
    const float rescale = m == -INFINITY ? 0.f : expf(m - new_m);
    float chunk_sum = 0.f, chunk_acc = 0.f;
    for (int j = 0; j < 128 && c0 + j <= last; ++j) {
      const float p = expf(scores[j] - new_m);
      chunk_sum += p;
      if (t < s.head_dim) chunk_acc += p * float(vbase[std::int64_t(c0 + j) * s.head_dim + t]);
    }
    l = l * rescale + chunk_sum;
    acc = acc * rescale + chunk_acc;
    m = new_m;
    __syncthreads();
  }
  if (t < s.head_dim) o[std::int64_t(row) * s.head_dim + t] = acc / l;
  if (t == 0) lse[row] = m + logf(l);
}

// The contiguous cache [batch, kv_heads, kv_len, d] scattered into shuffled
// pages [pages, kv_heads, page_size, d].
template <typename T>
__global__ void scatter_pages(const T* src, T* pages, const int* table, Shape s, int per_seq) {
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const std::int64_t total = std::int64_t(kv_elements(s));
  if (i >= total) return;
  const int d = int(i % s.head_dim);
  const int token = int((i / s.head_dim) % s.kv_len);
  const int kv_head = int((i / s.head_dim / s.kv_len) % s.kv_heads);
  const int batch = int(i / s.head_dim / s.kv_len / s.kv_heads);
  const int page = table[batch * per_seq + token / s.page_size];
  pages[((std::int64_t(page) * s.kv_heads + kv_head) * s.page_size + token % s.page_size) *
            s.head_dim +
        d] = src[i];
}

// Four independent 16-byte loads per thread in flight; count % (4 x grid
// threads) == 0 for the sizes used here.
__global__ void read_stream(const uint4* data, std::size_t count, unsigned* sink) {
  unsigned x = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i + 3 * stride < count;
       i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = __ldcs(data + i + j * stride);
#pragma unroll
    for (int j = 0; j < 4; ++j) x ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
  }
  if (x == 0x12345678u) *sink = x;
}

int sm_count() {
  int device = 0, sms = 0;
  CFR_CUDA_CHECK(cudaGetDevice(&device));
  CFR_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

struct Variant {
  std::string name;
  int head_dim;
  DType dtype;
  int warps, rows, bc, stages, smem, ctas_per_sm;
  cudaError_t (*launch)(const Shape&, const void*, const void*, const void*, const int*, int, void*,
                        float*, void*, int, cudaStream_t);
  std::size_t (*workspace)(const Shape&, int);
};

template <typename T, typename Cfg>
cudaError_t launch_variant(const Shape& s, const void* q, const void* k, const void* v,
                           const int* table, int per_seq, void* o, float* lse, void* workspace,
                           int splits, cudaStream_t stream) {
  decode::DecodeParams<T> p{};
  p.q = static_cast<const T*>(q);
  p.k = static_cast<const T*>(k);
  p.v = static_cast<const T*>(v);
  p.o = static_cast<T*>(o);
  p.lse = lse;
  p.page_table = s.page_size > 0 ? table : nullptr;
  p.pages_per_sequence = per_seq;
  p.page_shift = s.page_size > 0 ? __builtin_ctz(unsigned(s.page_size)) : 0;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.group = s.heads / s.kv_heads;
  p.q_len = s.q_len;
  p.kv_len = s.kv_len;
  p.group_rows = p.group * s.q_len;
  p.causal = s.causal;
  p.scale_log2 = log2_e / std::sqrt(float(s.head_dim));
  return decode::launch_decode<T, Cfg>(p, s.batch, splits, workspace, stream);
}

template <typename Cfg>
std::size_t workspace_of(const Shape& s, int splits) {
  return decode::workspace_bytes<Cfg>(s.batch, s.heads, s.kv_heads, s.q_len, splits);
}

template <typename T, typename Cfg>
Variant make(const char* name) {
  return {name,
          Cfg::head_dim,
          std::is_same_v<T, __half> ? DType::fp16 : DType::bf16,
          Cfg::warps,
          Cfg::rows,
          Cfg::bc,
          Cfg::stages,
          Cfg::smem_bytes,
          Cfg::min_ctas_per_sm,
          launch_variant<T, Cfg>,
          workspace_of<Cfg>};
}

using decode::DecodeConfig;
std::vector<Variant> variants() {
  // DecodeConfig<d, warps, row warps, Bc, stages, CTAs per SM[, shared table
  // entries, fewest tokens a page, 32-bit paged offsets]>
  return {
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2>>("d128_w4r1_bc64_s3"),
      // Deeper rings at one CTA an SM: more of a split's bytes in flight
      // where a paged cache's copies wait on their page indices (round 11).
      make<__half, DecodeConfig<128, 4, 1, 64, 4, 1>>("d128_w4r1_bc64_s4_c1"),
      make<__half, DecodeConfig<128, 4, 1, 64, 6, 1>>("d128_w4r1_bc64_s6_c1"),
      // The split's page indices read into shared memory once (round 12).
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2, 2048>>("d128_w4r1_bc64_s3_t2k"),
      // One page lookup and 64-bit address per 16 rows, not per row: pages of
      // at least 16 tokens only (round 13).
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2, 0, 16>>("d128_w4r1_bc64_s3_p16"),
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2, 2048, 16>>("d128_w4r1_bc64_s3_t2k_p16"),
      // Each pass's page slab as a 32-bit row number, formed just before the
      // copies that use it (round 14; the _t2k_o32 pair is what revision 2
      // registers at d 128 on sm_90).
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2, 0, 1, true>>("d128_w4r1_bc64_s3_o32"),
      make<__half, DecodeConfig<128, 4, 1, 64, 3, 2, 2048, 1, true>>("d128_w4r1_bc64_s3_t2k_o32"),
      make<__half, DecodeConfig<128, 4, 1, 64, 2, 3>>("d128_w4r1_bc64_s2"),
      make<__half, DecodeConfig<128, 4, 2, 64, 3, 2>>("d128_w4r2_bc64_s3"),
      make<__half, DecodeConfig<128, 4, 4, 64, 2, 2>>("d128_w4r4_bc64_s2"),
      make<__nv_bfloat16, DecodeConfig<128, 4, 1, 64, 3, 2>>("bf16_d128_w4r1_bc64_s3"),
      make<__half, DecodeConfig<64, 4, 1, 128, 3, 2>>("d64_w4r1_bc128_s3"),
      make<__half, DecodeConfig<64, 4, 4, 64, 3, 2>>("d64_w4r4_bc64_s3"),
  };
}

struct Cache {
  DeviceBuffer q, k, v, o, lse, k_pages, v_pages, table, ref_o, ref_lse, workspace;
  int per_seq = 0;
};

// The workspace for `splits`, zeroed as the kernel's contract asks.
void prepare_workspace(Cache& c, std::size_t bytes, cudaStream_t stream) {
  c.workspace = measure::zeroed_workspace(bytes, stream);
}

Cache make_cache(const Shape& s, std::uint64_t seed, cudaStream_t stream, bool reference) {
  const std::size_t eb = element_bytes(s.dtype);
  Cache c{DeviceBuffer(q_elements(s) * eb),
          DeviceBuffer(kv_elements(s) * eb),
          DeviceBuffer(kv_elements(s) * eb),
          DeviceBuffer(q_elements(s) * eb),
          DeviceBuffer(q_rows(s) * 4),
          DeviceBuffer(0),
          DeviceBuffer(0),
          DeviceBuffer(0),
          DeviceBuffer(reference ? q_elements(s) * 4 : 0),
          DeviceBuffer(reference ? q_rows(s) * 4 : 0),
          DeviceBuffer(0)};
  CFR_CUDA_CHECK(
      fill_random(c.q.data(), q_elements(s), s.dtype, seed, Distribution::normal, stream));
  CFR_CUDA_CHECK(
      fill_random(c.k.data(), kv_elements(s), s.dtype, seed + 1, Distribution::normal, stream));
  CFR_CUDA_CHECK(
      fill_random(c.v.data(), kv_elements(s), s.dtype, seed + 2, Distribution::uniform, stream));
  if (s.page_size > 0) {
    c.per_seq = (s.kv_len + s.page_size - 1) / s.page_size;
    const int pages = s.batch * c.per_seq;
    std::vector<int> order(pages);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng{static_cast<unsigned>(seed)};
    if (!s.pages_in_order) std::shuffle(order.begin(), order.end(), rng);
    c.table = DeviceBuffer(std::size_t(pages) * 4);
    CFR_CUDA_CHECK(cudaMemcpy(c.table.data(), order.data(), pages * 4, cudaMemcpyHostToDevice));
    const std::size_t page_elems = std::size_t(pages) * s.page_size * s.kv_heads * s.head_dim;
    c.k_pages = DeviceBuffer(page_elems * eb);
    c.v_pages = DeviceBuffer(page_elems * eb);
    const unsigned blocks = unsigned((kv_elements(s) + 255) / 256);
    if (s.dtype == DType::fp16) {
      scatter_pages<<<blocks, 256, 0, stream>>>(c.k.as<__half>(), c.k_pages.as<__half>(),
                                                c.table.as<int>(), s, c.per_seq);
      scatter_pages<<<blocks, 256, 0, stream>>>(c.v.as<__half>(), c.v_pages.as<__half>(),
                                                c.table.as<int>(), s, c.per_seq);
    } else {
      scatter_pages<<<blocks, 256, 0, stream>>>(
          c.k.as<__nv_bfloat16>(), c.k_pages.as<__nv_bfloat16>(), c.table.as<int>(), s, c.per_seq);
      scatter_pages<<<blocks, 256, 0, stream>>>(
          c.v.as<__nv_bfloat16>(), c.v_pages.as<__nv_bfloat16>(), c.table.as<int>(), s, c.per_seq);
    }
    CFR_CUDA_CHECK(cudaGetLastError());
  }
  if (reference) {
    const float scale = 1.f / std::sqrt(float(s.head_dim));
    if (s.dtype == DType::fp16)
      reference_rows<<<unsigned(q_rows(s)), 128, 0, stream>>>(c.q.as<__half>(), c.k.as<__half>(),
                                                              c.v.as<__half>(), c.ref_o.as<float>(),
                                                              c.ref_lse.as<float>(), s, scale);
    else
      reference_rows<<<unsigned(q_rows(s)), 128, 0, stream>>>(
          c.q.as<__nv_bfloat16>(), c.k.as<__nv_bfloat16>(), c.v.as<__nv_bfloat16>(),
          c.ref_o.as<float>(), c.ref_lse.as<float>(), s, scale);
    CFR_CUDA_CHECK(cudaGetLastError());
  }
  return c;
}

// One CTA per SM: the largest power of two of splits whose grid fits the
// SMs, each split at least 4 tiles; one split once the groups fill the SMs.
int splits_for(const Variant& variant, const Shape& s) {
  const int group_rows = s.heads / s.kv_heads * s.q_len;
  const std::int64_t base =
      std::int64_t(s.batch) * s.kv_heads * ((group_rows + variant.rows - 1) / variant.rows);
  const int tiles = (s.kv_len + variant.bc - 1) / variant.bc;
  int splits = 1;
  while (base * splits * 2 <= sm_count() && tiles / (splits * 2) >= 4) splits *= 2;
  return splits;
}

cudaError_t run(const Variant& variant, const Shape& s, Cache& c, int splits, cudaStream_t stream) {
  const bool paged = s.page_size > 0;
  return variant.launch(s, c.q.data(), paged ? c.k_pages.data() : c.k.data(),
                        paged ? c.v_pages.data() : c.v.data(), c.table.as<int>(), c.per_seq,
                        c.o.data(), c.lse.as<float>(), c.workspace.data(), splits, stream);
}

bool check_with(const Variant& variant, const Shape& s, int splits, cudaStream_t stream,
                double& worst) {
  Cache c = make_cache(s, 1234 + s.kv_len, stream, true);
  prepare_workspace(c, variant.workspace(s, splits), stream);
  CFR_CUDA_CHECK(poison(c.o.data(), c.o.bytes(), stream));
  CFR_CUDA_CHECK(poison(c.lse.data(), c.lse.bytes(), stream));
  const cudaError_t status = run(variant, s, c, splits, stream);
  if (status != cudaSuccess) {
    std::printf("    launch error: %s\n", cudaGetErrorString(status));
    return false;
  }
  // Twice: the second launch finds the workspace as the first left it.
  CheckResult o_err, lse_err;
  CFR_CUDA_CHECK(compare_with_reference(c.o.data(), s.dtype, c.ref_o.as<float>(), q_elements(s),
                                        stream, o_err));
  if (passes(o_err, tolerance_for(s.dtype))) {
    CFR_CUDA_CHECK(poison(c.o.data(), c.o.bytes(), stream));
    CFR_CUDA_CHECK(run(variant, s, c, splits, stream));
    CFR_CUDA_CHECK(compare_with_reference(c.o.data(), s.dtype, c.ref_o.as<float>(), q_elements(s),
                                          stream, o_err));
  }
  CFR_CUDA_CHECK(compare_with_reference(c.lse.data(), DType::fp32, c.ref_lse.as<float>(), q_rows(s),
                                        stream, lse_err));
  const Tolerance tolerance = tolerance_for(s.dtype);
  worst = std::max({worst, o_err.rel_l2_err, lse_err.rel_l2_err});
  const bool ok = passes(o_err, tolerance) && passes(lse_err, tolerance);
  if (!ok)
    std::printf("  FAILED B%d H%d/%d Nq%d Nk%d causal%d page%d splits%d: O %.3g LSE %.3g\n",
                s.batch, s.heads, s.kv_heads, s.q_len, s.kv_len, s.causal, s.page_size, splits,
                o_err.rel_l2_err, lse_err.rel_l2_err);
  return ok;
}

// With the planned splits and with 3 (ragged: the last split shorter).
bool check(const Variant& variant, const Shape& s, cudaStream_t stream, double& worst) {
  return check_with(variant, s, splits_for(variant, s), stream, worst) &&
         check_with(variant, s, 3, stream, worst);
}

// Every variant's check: GQA and MHA, Nq 1, 3, 16, Nk 1 to 4097, both masks,
// contiguous and paged caches, the planned splits and a ragged 3.
bool check_variant(const Variant& variant, cudaStream_t stream) {
  bool all = true;
  double worst = 0;
  const int group_max = 4;
  for (int kv_len : {1, 17, 64, 100, 4097}) {
    for (int q_len : {1, 3, 16}) {
      if (q_len > kv_len) continue;
      for (bool causal : {false, true}) {
        for (int page : {0, 16, 256}) {
          for (int kv_heads : {1, 2}) {
            const Shape s{2,      kv_heads * group_max, kv_heads, q_len, kv_len, variant.head_dim,
                          causal, variant.dtype,        page};
            all = check(variant, s, stream, worst) && all;
          }
        }
      }
    }
  }
  // MHA (group 1) and group 8, one each.
  all =
      check(variant, {3, 6, 6, 2, 999, variant.head_dim, true, variant.dtype, 0}, stream, worst) &&
      all;
  all = check(variant, {1, 16, 2, 5, 3000, variant.head_dim, true, variant.dtype, 16}, stream,
              worst) &&
        all;
  std::printf("%s: check %s, worst rel L2 %.2e (rows %d Bc %d stages %d smem %d)\n",
              variant.name.c_str(), all ? "passed" : "FAILED", worst, variant.rows, variant.bc,
              variant.stages, variant.smem);
  return all;
}

double read_stream_tbps(cudaStream_t stream, measure::L2Flusher& flusher) {
  const std::size_t bytes = std::size_t(4) << 30;
  DeviceBuffer data(bytes), sink(4);
  CFR_CUDA_CHECK(cudaMemsetAsync(data.data(), 1, bytes, stream));
  const int blocks = sm_count() * 8;
  const auto samples = time_cold(
      [&] {
        read_stream<<<blocks, 512, 0, stream>>>(data.as<uint4>(), bytes / 16, sink.as<unsigned>());
        return cudaGetLastError();
      },
      stream, flusher, 10);
  return bytes / (median(samples) * 1e-3) / 1e12;
}

}  // namespace

// fa2_mma, the registered launcher, on GQA and Nq != Nk shapes (bottom-right
// causal), checked against the reference here and timed on prefill shapes.
int run_fa2(measure::L2Flusher& flusher, cudaStream_t stream) {
  const ForwardKernel* fa2 = find_forward_kernel("fa2_mma");
  int failures = 0;
  const auto launch = [&](const Shape& s, Cache& c) {
    AttentionShape shape;
    shape.batch = s.batch;
    shape.heads = s.heads;
    shape.seq_len = s.q_len;
    shape.head_dim = s.head_dim;
    shape.causal = s.causal;
    shape.dtype = s.dtype;
    shape.kv_len = s.kv_len;
    shape.kv_heads = s.kv_heads;
    ForwardBuffers io{c.q.data(), c.k.data(), c.v.data(), c.o.data(), c.lse.as<float>()};
    LaunchContext context;
    context.stream = stream;
    return fa2->launch(shape, io, context);
  };
  double worst = 0;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (int d : {64, 128}) {
      for (auto [b, h, hkv, nq, nk] : std::vector<std::array<int, 5>>{{2, 8, 2, 100, 100},
                                                                      {1, 8, 1, 17, 300},
                                                                      {2, 4, 4, 1, 77},
                                                                      {1, 6, 2, 257, 1000},
                                                                      {1, 8, 2, 1, 4097},
                                                                      {1, 4, 1, 64, 64},
                                                                      {1, 4, 4, 130, 129}}) {
        for (bool causal : {false, true}) {
          if (causal && nq > nk) continue;
          const Shape s{b, h, hkv, nq, nk, d, causal, dtype, 0};
          Cache c = make_cache(s, 77 + nk, stream, true);
          CFR_CUDA_CHECK(poison(c.o.data(), c.o.bytes(), stream));
          CFR_CUDA_CHECK(launch(s, c));
          CheckResult o_err, lse_err;
          CFR_CUDA_CHECK(compare_with_reference(c.o.data(), dtype, c.ref_o.as<float>(),
                                                q_elements(s), stream, o_err));
          CFR_CUDA_CHECK(compare_with_reference(c.lse.data(), DType::fp32, c.ref_lse.as<float>(),
                                                q_rows(s), stream, lse_err));
          worst = std::max({worst, o_err.rel_l2_err, lse_err.rel_l2_err});
          if (!passes(o_err, tolerance_for(dtype)) || !passes(lse_err, tolerance_for(dtype))) {
            ++failures;
            std::printf("  fa2_mma FAILED d%d B%d H%d/%d Nq%d Nk%d causal%d: %.3g %.3g\n", d, b, h,
                        hkv, nq, nk, causal, o_err.rel_l2_err, lse_err.rel_l2_err);
          }
        }
      }
    }
  }
  std::printf("fa2_mma GQA/Nq!=Nk check: %s, worst rel L2 %.2e\n", failures ? "FAILED" : "passed",
              worst);
  for (int d : {128, 64}) {
    for (auto [b, h, hkv, n, causal] : std::vector<std::array<int, 5>>{{1, 32, 8, 8192, 1},
                                                                       {1, 32, 8, 8192, 0},
                                                                       {1, 32, 8, 4096, 1},
                                                                       {1, 32, 8, 16384, 1},
                                                                       {1, 32, 8, 16384, 0},
                                                                       {4, 32, 8, 4096, 1},
                                                                       {1, 32, 4, 8192, 1}}) {
      const Shape s{b, h, hkv, n, n, d, causal != 0, DType::fp16, 0};
      Cache c = make_cache(s, 5, stream, false);
      const double ms = median(time_cold([&] { return launch(s, c); }, stream, flusher, 15));
      const double flops = 4.0 * b * h * double(n) * n * d * (causal ? 0.5 : 1.0);
      std::printf("fa2_mma d%d B%d H%d/%d N%d causal%d %9.1f us %6.1f TFLOPS\n", d, b, h, hkv, n,
                  causal, ms * 1e3, flops / ms / 1e9);
    }
  }
  return failures;
}

// Every split count from 1 to 8 and a few beyond, on the shapes where the
// plan's power of two may leave the last wave of CTAs part-empty
// (docs/perf-notes.md, "Waves"). No check: run the variant's check first.
int run_waves(const Variant& variant, measure::L2Flusher& flusher, cudaStream_t stream) {
  struct Timed {
    int batch, kv_heads, kv_len;
  };
  for (const Timed& t : std::vector<Timed>{{1, 8, 32768},
                                           {8, 8, 8192},
                                           {32, 8, 2048},
                                           {32, 8, 32768},
                                           {128, 8, 2048},
                                           {8, 32, 32768},
                                           {8, 32, 131072},
                                           {32, 32, 2048},
                                           {128, 32, 2048}}) {
    const Shape s{t.batch, 32, t.kv_heads, 1, t.kv_len, variant.head_dim, false, variant.dtype, 0};
    Cache c = make_cache(s, 99, stream, false);
    const int tiles = (s.kv_len + variant.bc - 1) / variant.bc;
    const double bytes =
        double(element_bytes(s.dtype)) * (2.0 * q_elements(s) + 2.0 * kv_elements(s));
    std::printf("%s waves B%-3d H32/%-2d Nk%-6d plan %d |", variant.name.c_str(), s.batch,
                s.kv_heads, s.kv_len, splits_for(variant, s));
    for (int splits : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 33, 48, 64, 66}) {
      if (splits * 4 > tiles && splits > 1) continue;
      prepare_workspace(c, variant.workspace(s, splits), stream);
      const double ms = median(
          time_cold([&] { return run(variant, s, c, splits, stream); }, stream, flusher, 15));
      std::printf(" s%d %.1f (%.1f%%)", splits, ms * 1e3, 100 * bytes / (ms * 1e-3) / 4.5267e12);
    }
    std::printf("\n");
  }
  return 0;
}

// The split counts around the plan on paged and contiguous caches (fp16,
// 32/8 heads, one query token), every count of a shape timed in turn, 15
// samples each: what the plan's "two CTAs an SM for a paged cache" buys
// (perf-notes, rounds 11-13). No check here: `--splits NAME...` checks each
// named variant first.
int run_splits(const Variant& variant, measure::L2Flusher& flusher, cudaStream_t stream) {
  struct Timed {
    int batch, kv_len;
  };
  for (const Timed& t : std::vector<Timed>{{1, 32768}, {1, 131072}, {8, 32768}, {8, 131072}}) {
    for (int page : {0, 16, 256}) {
      const Shape s{t.batch, 32, 8, 1, t.kv_len, variant.head_dim, false, variant.dtype, page};
      Cache c = make_cache(s, 99, stream, false);
      const int tiles = (s.kv_len + variant.bc - 1) / variant.bc;
      std::vector<int> counts;
      for (int splits : {1, 2, 4, 8, 16, 24, 32}) {
        if (std::int64_t(t.batch) * s.kv_heads * splits <= 2 * sm_count() && splits * 4 <= tiles)
          counts.push_back(splits);
      }
      // One workspace for every count: the largest count's is the largest, and
      // every launch leaves its arrival counters zero for the next.
      prepare_workspace(c, variant.workspace(s, counts.back()), stream);
      std::vector<std::function<cudaError_t()>> launches;
      for (int splits : counts) {
        launches.push_back([&, splits] { return run(variant, s, c, splits, stream); });
      }
      const auto samples = gpu_tools::time_cold_in_turn(launches, stream, flusher, 15);
      std::printf("%s splits B%-2d H32/8 Nk%-6d page%-3d plan %-2d |", variant.name.c_str(),
                  s.batch, s.kv_len, s.page_size, splits_for(variant, s));
      for (std::size_t k = 0; k < counts.size(); ++k) {
        std::printf(" s%d %.2f", counts[k], median(samples[k]) * 1e3);
      }
      std::printf("\n");
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* filter = argc > 1 ? argv[1] : "";
  if (std::string(filter) == "--waves") {
    measure::CudaStream stream;
    measure::L2Flusher flusher(0);
    const char* name = argc > 2 ? argv[2] : "d128_w4r1_bc64_s3";
    for (const Variant& variant : variants()) {
      if (variant.name == name) return run_waves(variant, flusher, stream.get());
    }
    return 1;
  }
  if (std::string(filter) == "--splits") {
    // decode_dev --splits [VARIANT...]: each named variant checked, then timed
    // (default: the registered tile's twin, d128_w4r1_bc64_s3, unchecked).
    measure::CudaStream stream;
    measure::L2Flusher flusher(0);
    std::vector<std::string> names(argv + 2, argv + argc);
    const bool checked = !names.empty();
    if (names.empty()) names.push_back("d128_w4r1_bc64_s3");
    int status = 0;
    for (const std::string& name : names) {
      bool found = false;
      for (const Variant& variant : variants()) {
        if (variant.name != name) continue;
        found = true;
        if (checked && !check_variant(variant, stream.get())) {
          status = 1;
          continue;
        }
        status |= run_splits(variant, flusher, stream.get());
      }
      if (!found) {
        std::fprintf(stderr, "decode_dev: no variant '%s'\n", name.c_str());
        status = 1;
      }
    }
    return status;
  }
  if (std::string(filter) == "--fa2") {
    measure::CudaStream stream;
    measure::L2Flusher flusher(0);
    return run_fa2(flusher, stream.get()) == 0 ? 0 : 1;
  }
  measure::CudaStream stream;
  measure::L2Flusher flusher(0);
  std::printf("read stream (4 GiB, cold): %.3f TB/s\n", read_stream_tbps(stream.get(), flusher));
  int failures = 0;
  for (const Variant& variant : variants()) {
    if (std::strstr(variant.name.c_str(), filter) == nullptr) continue;
    if (!check_variant(variant, stream.get())) {
      ++failures;
      continue;
    }
    struct Timed {
      int batch, heads, kv_heads, q_len, kv_len, page;
    };
    std::vector<Timed> timed;
    for (int heads_kv : {8, 32}) {
      for (int batch : {1, 8, 32, 128}) {
        for (int kv_len : {2048, 8192, 32768, 131072}) {
          if (std::int64_t(batch) * kv_len * heads_kv > (std::int64_t(32) << 20)) continue;
          timed.push_back({batch, 32, heads_kv, 1, kv_len, 0});
        }
      }
    }
    for (int q_len : {4, 16}) timed.push_back({8, 32, 8, q_len, 32768, 0});
    for (int page : {16, 256}) {
      timed.push_back({8, 32, 8, 1, 32768, page});
      timed.push_back({1, 32, 8, 1, 131072, page});
    }
    timed.push_back({8, 32, 8, 1, 32768, -16});  // pages in order
    for (const Timed& t : timed) {
      if (t.heads / t.kv_heads * t.q_len > 2 * variant.rows && variant.rows < 64) continue;
      const Shape s{t.batch,          t.heads,     t.kv_heads,    t.q_len,          t.kv_len,
                    variant.head_dim, t.q_len > 1, variant.dtype, std::abs(t.page), t.page < 0};
      const int tiles = (s.kv_len + variant.bc - 1) / variant.bc;
      std::vector<int> candidates{splits_for(variant, s), 1, 2, 4, 8, 16, 32, 64};
      std::sort(candidates.begin(), candidates.end());
      candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
      Cache c = make_cache(s, 99, stream.get(), false);
      const double bytes =
          double(element_bytes(s.dtype)) * (2.0 * q_elements(s) + 2.0 * kv_elements(s));
      std::printf("%-26s B%-3d H%d/%-2d Nq%-2d Nk%-6d page%-3d%s plan %-3d |", variant.name.c_str(),
                  s.batch, s.heads, s.kv_heads, s.q_len, s.kv_len, s.page_size,
                  s.pages_in_order ? "o" : " ", splits_for(variant, s));
      double best_ms = 1e30;
      int best_splits = 0;
      for (int splits : candidates) {
        if (splits > tiles) continue;
        prepare_workspace(c, variant.workspace(s, splits), stream.get());
        const auto samples = time_cold([&] { return run(variant, s, c, splits, stream.get()); },
                                       stream.get(), flusher, 10);
        const double ms = median(samples);
        if (ms < best_ms) best_ms = ms, best_splits = splits;
        std::printf(" s%d %.1f", splits, ms * 1e3);
      }
      std::printf(" | best s%d %.2f us %.3f TB/s\n", best_splits, best_ms * 1e3,
                  bytes / (best_ms * 1e-3) / 1e12);
    }
  }
  return failures == 0 ? 0 : 1;
}
