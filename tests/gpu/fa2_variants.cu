// fa2_mma tile variants, checked and timed side by side in one run (METHOD.md:
// one script builds, checks and times several variants). Each variant is
// first checked against the fp32 reference on ragged and exact lengths, both
// masks; only a variant that passes is timed: B = 1, H = 8, N = 4096 and
// 16384, cold (L2 flushed before every sample), median of the samples, which
// are printed too. Not a test and not part of a report: it picks the tiles
// that kernels/fa2_mma.cu registers (docs/perf-notes.md records the runs).
//
// usage: fa2_variants [filter]   (checks and times the variants whose name contains filter)
//        fa2_variants --once NAME HEADS SEQ_LEN CAUSAL
//                                  (one launch of one variant, B = 1, for Nsight Compute)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/fa2_mma.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"
#include "tests/gpu/variant_tool.cuh"

namespace {

using namespace cfr;
using namespace cfr::kernels;
using gpu_tools::median;
using measure::DeviceBuffer;

struct Problem {
  int batch, heads, seq_len, head_dim;
  bool causal;
  DType dtype;
};

using Launch = cudaError_t (*)(const Problem&, const void*, const void*, const void*, void*, float*,
                               cudaStream_t);

AttentionShape shape_of(const Problem& p);

template <typename T, typename Cfg>
cudaError_t launch_variant(const Problem& p, const void* q, const void* k, const void* v, void* o,
                           float* lse, cudaStream_t stream) {
  return fa2::launch_fa2_mma_config<T, Cfg>(
      shape_of(p), static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
      static_cast<T*>(o), lse, log2_e / std::sqrt(static_cast<float>(p.head_dim)), stream);
}

struct Variant {
  std::string name;
  int head_dim;
  DType dtype;
  int br, bc, warps, stages, smem;
  Launch launch;
};

template <typename T, typename Cfg>
Variant make(const char* name) {
  return {name,        Cfg::head_dim,   std::is_same_v<T, __half> ? DType::fp16 : DType::bf16,
          Cfg::br,     Cfg::bc,         Cfg::warps,
          Cfg::stages, Cfg::smem_bytes, launch_variant<T, Cfg>};
}

using fa2::Fa2Config;
constexpr GridAxis heads_x = GridAxis::heads;
constexpr GridAxis batch_y = GridAxis::batch;
constexpr GridAxis q_z = GridAxis::q_blocks;

std::vector<Variant> variants() {
  return {
      make<__half, Fa2Config<32, 128, 4, 2, 2, 2, true>>("d32_bc128_w4x2_e"),
      make<__half, Fa2Config<64, 64, 4, 2, 2, 2, true>>("d64_bc64_w4x2_e"),
      make<__half, Fa2Config<64, 128, 8, 2, 2, 1, true>>("d64_bc128_w8x2_e"),
      make<__half, Fa2Config<128, 64, 8, 2, 2, 1>>("d128_bc64_w8x2"),
      make<__half, Fa2Config<128, 64, 8, 2, 2, 1, true>>("d128_bc64_w8x2_e"),
      make<__half, Fa2Config<128, 64, 8, 2, 3, 1, true>>("d128_bc64_w8x2_s3_e"),
      make<__half, Fa2Config<128, 32, 8, 2, 2, 1, true>>("d128_bc32_w8x2_e"),
      make<__half, Fa2Config<128, 32, 4, 2, 2, 2, true>>("d128_bc32_w4x2_e"),
      make<__nv_bfloat16, Fa2Config<64, 64, 4, 2, 2, 2, true>>("bf16_d64_bc64_w4x2_e"),
      make<__nv_bfloat16, Fa2Config<128, 64, 8, 2, 2, 1>>("bf16_d128_bc64_w8x2"),
      make<__nv_bfloat16, Fa2Config<128, 64, 8, 2, 2, 1, true>>("bf16_d128_bc64_w8x2_e"),
      // Launch order: the registered tiles with q blocks on blockIdx.x (each
      // head's blocks heaviest first, head after head) against heads on x and
      // q blocks on z (every head's heaviest block first, across the grid).
      make<__half, Fa2Config<64, 64, 4, 2, 2, 2, true>>("order_q_d64"),
      make<__half, Fa2Config<64, 64, 4, 2, 2, 2, true, heads_x, batch_y, q_z>>("order_h_d64"),
      make<__half, Fa2Config<128, 64, 8, 2, 2, 1>>("order_q_d128"),
      make<__half, Fa2Config<128, 64, 8, 2, 2, 1, false, heads_x, batch_y, q_z>>("order_h_d128"),
      make<__nv_bfloat16, Fa2Config<128, 64, 8, 2, 2, 1, false, heads_x, batch_y, q_z>>(
          "order_h_bf16_d128"),
      make<__half, Fa2Config<128, 64, 4, 2, 2, 2, false, heads_x, batch_y, q_z>>(
          "order_h_d128_br128"),
  };
}

std::size_t elements(const Problem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_len * p.head_dim;
}
std::size_t rows(const Problem& p) {
  return static_cast<std::size_t>(p.batch) * p.heads * p.seq_len;
}

AttentionShape shape_of(const Problem& p) {
  AttentionShape s;
  s.batch = p.batch;
  s.heads = p.heads;
  s.seq_len = p.seq_len;
  s.head_dim = p.head_dim;
  s.causal = p.causal;
  s.dtype = p.dtype;
  return s;
}

struct Tensors {
  DeviceBuffer q, k, v, o, lse;
  Tensors(const Problem& p, std::uint64_t seed, cudaStream_t stream)
      : q(elements(p) * element_bytes(p.dtype)),
        k(elements(p) * element_bytes(p.dtype)),
        v(elements(p) * element_bytes(p.dtype)),
        o(elements(p) * element_bytes(p.dtype)),
        lse(rows(p) * sizeof(float)) {
    CFR_CUDA_CHECK(fill_random(q.data(), elements(p), p.dtype, seed, Distribution::normal, stream));
    CFR_CUDA_CHECK(
        fill_random(k.data(), elements(p), p.dtype, seed + 1, Distribution::normal, stream));
    CFR_CUDA_CHECK(
        fill_random(v.data(), elements(p), p.dtype, seed + 2, Distribution::uniform, stream));
  }
};

// Worst rel L2 error of O and LSE against the reference; 1e9 on a launch error.
double check(const Variant& variant, const Problem& p, cudaStream_t stream, bool& passed) {
  Tensors t(p, 1234 + p.seq_len, stream);
  DeviceBuffer ref_o(elements(p) * sizeof(float)), ref_lse(rows(p) * sizeof(float));
  CFR_CUDA_CHECK(reference_forward(shape_of(p), t.q.data(), t.k.data(), t.v.data(),
                                   ref_o.as<float>(), ref_lse.as<float>(), stream));
  CFR_CUDA_CHECK(poison(t.o.data(), t.o.bytes(), stream));
  CFR_CUDA_CHECK(poison(t.lse.data(), t.lse.bytes(), stream));
  const cudaError_t status =
      variant.launch(p, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.as<float>(), stream);
  if (status != cudaSuccess) {
    std::printf("    launch error: %s\n", cudaGetErrorString(status));
    passed = false;
    return 1e9;
  }
  CheckResult o_err, lse_err;
  CFR_CUDA_CHECK(
      compare_with_reference(t.o.data(), p.dtype, ref_o.as<float>(), elements(p), stream, o_err));
  CFR_CUDA_CHECK(compare_with_reference(t.lse.data(), DType::fp32, ref_lse.as<float>(), rows(p),
                                        stream, lse_err));
  const Tolerance tolerance = tolerance_for(p.dtype);
  passed = passes(o_err, tolerance) && passes(lse_err, tolerance);
  return std::max(o_err.rel_l2_err, lse_err.rel_l2_err);
}

std::vector<double> time_cold(const Variant& variant, const Problem& p, cudaStream_t stream,
                              measure::L2Flusher& flusher, int samples) {
  Tensors t(p, 99, stream);
  return gpu_tools::time_cold(
      [&] {
        return variant.launch(p, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.as<float>(),
                              stream);
      },
      stream, flusher, samples);
}

}  // namespace

// One launch on random inputs, nothing else on the device but the fills.
int run_once(const Variant& variant, int heads, int seq_len, bool causal) {
  measure::CudaStream stream;
  const Problem p{1, heads, seq_len, variant.head_dim, causal, variant.dtype};
  Tensors t(p, 5, stream.get());
  CFR_CUDA_CHECK(variant.launch(p, t.q.data(), t.k.data(), t.v.data(), t.o.data(),
                                t.lse.as<float>(), stream.get()));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return 0;
}

int main(int argc, char** argv) {
  measure::CudaStream stream;
  measure::L2Flusher flusher(0);
  std::printf("%-22s %5s %6s %3s %7s %10s %8s  samples (ms)\n", "variant", "N", "causal", "d",
              "smem", "median ms", "TFLOPS");
  // Checked on ragged and exact lengths, both masks; timed only if it passed.
  auto check_and_time = [&](const Variant& variant) {
    bool all_passed = true;
    double worst = 0;
    for (int seq_len : {1, 17, 64, 1000, 4097}) {
      for (bool causal : {false, true}) {
        const Problem p{seq_len == 64 || seq_len == 4097 ? 1 : 2,
                        3,
                        seq_len,
                        variant.head_dim,
                        causal,
                        variant.dtype};
        bool passed = false;
        worst = std::max(worst, check(variant, p, stream.get(), passed));
        if (!passed) {
          std::printf("  %s FAILED at N=%d causal=%d (rel err %.3g)\n", variant.name.c_str(),
                      seq_len, causal, worst);
          all_passed = false;
        }
      }
    }
    std::printf("%s: check %s, worst rel L2 %.2e (Br %d Bc %d warps %d stages %d)\n",
                variant.name.c_str(), all_passed ? "passed" : "FAILED", worst, variant.br,
                variant.bc, variant.warps, variant.stages);
    if (!all_passed) return false;
    for (int seq_len : {4096, 8192, 16384}) {
      for (bool causal : {false, true}) {
        const Problem p{1, 8, seq_len, variant.head_dim, causal, variant.dtype};
        const std::vector<double> samples = time_cold(variant, p, stream.get(), flusher, 15);
        const double ms = median(samples);
        const double flops = 4.0 * p.batch * p.heads * double(p.seq_len) * p.seq_len * p.head_dim *
                             (causal ? 0.5 : 1.0);
        std::printf("%-22s %5d %6d %3d %7d %10.4f %8.1f ", variant.name.c_str(), seq_len, causal,
                    variant.head_dim, variant.smem, ms, flops / ms / 1e9);
        for (double s : samples) std::printf(" %.4f", s);
        std::printf("\n");
      }
    }
    return true;
  };
  return gpu_tools::variant_tool_main(argc, argv, variants(), run_once, check_and_time);
}
