// fa2_bwd tuning variants, checked and timed side by side in one run
// (METHOD.md: one script builds, checks and times several variants). Each
// variant is first checked against the fp32 reference backward on ragged and
// exact lengths, both masks; only a variant that passes is timed: B = 1,
// H = 8, N = 4096, 8192 and 16384, the three launches together, cold (L2
// flushed before every sample), median of the samples, which are printed too.
// Not a test and not part of a report: it picks the config that
// kernels/fa2_backward.cu registers (docs/perf-notes.md records the runs).
//
// usage: fa2bwd_variants [filter]   (the variants whose name contains filter)
//        fa2bwd_variants --once NAME HEADS SEQ_LEN CAUSAL   (one call, for ncu)
//        fa2bwd_variants --clocks NAME HEADS SEQ_LEN CAUSAL  (a *_clock variant's
//            cycles by warp and part of a Q block: BwdTuning::barrier_clock)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/fa2_backward.cuh"
#include "kernels/fa2_backward_2d.cuh"
#include "kernels/fa3_backward.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"
#include "tests/gpu/variant_tool.cuh"

namespace {

using namespace cfr;
using namespace cfr::kernels;
using gpu_tools::median;
using measure::DeviceBuffer;

using Launch = cudaError_t (*)(const AttentionShape&, const BackwardBuffers&, const LaunchContext&);

struct Variant {
  std::string name;
  int head_dim;
  DType dtype;
  int br, bc, warps, smem;
  Launch launch;
};

template <typename T, typename Cfg>
Variant make_variant(const char* name, Launch launch) {
  return {name,
          Cfg::head_dim,
          std::is_same_v<T, __half> ? DType::fp16 : DType::bf16,
          Cfg::br,
          Cfg::bc,
          Cfg::warps,
          Cfg::smem_bytes,
          launch};
}

template <typename T, typename Cfg>
Variant make(const char* name) {
  return make_variant<T, Cfg>(name, fa2_bwd::launch_fa2_backward_config<T, Cfg>);
}

using fa2_bwd::Bwd2dConfig;
using fa2_bwd::BwdConfig;

// FlashAttention-2's warp tiling (kernels/fa2_backward_2d.cuh).
template <typename T, typename Cfg>
Variant make_2d(const char* name) {
  return make_variant<T, Cfg>(name, fa2_bwd::launch_fa2_backward_2d_config<T, Cfg>);
}
// The wgmma main launch (kernels/fa3_backward.cuh; sm_90a builds only).
template <typename T, typename Cfg>
Variant make_wgmma(const char* name) {
  return make_variant<T, Cfg>(name, fa3_bwd::launch_fa3_backward_config<T, Cfg>);
}
using fa3_bwd::BwdWgmmaConfig;

using fa2_bwd::BwdTuning;
constexpr BwdTuning base{false, false, 0};
constexpr BwdTuning vec{true, false, 0};
constexpr BwdTuning vec_split{true, true, 0};
constexpr BwdTuning vec_u2{true, false, 2};
constexpr BwdTuning vec_split_u2{true, true, 2};
constexpr BwdTuning vec_u1{true, false, 1};
constexpr BwdTuning mask_per_entry{false, false, 0, true};  // before the mask's one branch
constexpr BwdTuning vec_mask_per_entry{true, false, 0, true};
constexpr BwdTuning vec_u2_mask_per_entry{true, false, 2, true};
constexpr BwdTuning vec_dq_first{true, false, 0, false, true};      // dQ and its atomics before dK
constexpr BwdTuning fragments{true, false, 0, false, false, true};  // fragment-ordered dQ
constexpr BwdTuning fragments_dq_first{true, false, 0, false, true, true};
constexpr BwdTuning late_stat{true, false, 0, false, false, false, true};
// dQ first, fragments, late stat:
constexpr BwdTuning all_three{true, false, 0, false, true, true, true};
// Revision 3's knobs with the stats by cp.async:
constexpr BwdTuning rev3_async_stats{true, false, 0, false, true, true, false, true};
// Revision 3 with each warp's clock read around each part and barrier:
constexpr BwdTuning rev3_clock{true, false, 0, false, true, true, false, false, true};
// Revision 3 with dP's MMAs before P's exponentials, and clocked:
constexpr BwdTuning dp_first{true, false, 0, false, true, true, false, false, false, true};
constexpr BwdTuning dp_first_clock{true, false, 0, false, true, true, false, false, true, true};
// Revision 3 with S's K fragments kept in registers over the Q blocks, and
// the same with dP first:
constexpr BwdTuning resident_k{true, false, 0, false, true, true, false, false, false, false, true};
constexpr BwdTuning resident_k_dp_first{true,  false, 0,     false, true, true,
                                        false, false, false, true,  true};
// Revision 5's tunings with dK and dV each on half the warps (split_kv), dQ
// between the barrier and the warp's product, or after it (dq_last):
constexpr BwdTuning resident_k_split_kv{true,  false, 0,     false, true, true,
                                        false, false, false, false, true, true};
constexpr BwdTuning resident_k_split_kv_dq_last{true,  false, 0,     false, false, true,
                                                false, false, false, false, true,  true};
// Revision 6 (split_kv, dQ last) clocked; dQ on the dV half (dq_on_dv_warps),
// dQ last or first, and clocked:
constexpr BwdTuning rev6_clock{true,  false, 0,    false, false, true,
                               false, false, true, false, true,  true};
constexpr BwdTuning dq_on_dv{true,  false, 0,     false, false, true, false,
                             false, false, false, true,  true,  true};
constexpr BwdTuning dq_on_dv_dq_first{true,  false, 0,     false, true, true, false,
                                      false, false, false, true,  true, true};
constexpr BwdTuning dq_on_dv_clock{true,  false, 0,     false, false, true, false,
                                   false, true,  false, true,  true,  true};
constexpr BwdTuning dp_first_split_kv{true,  false, 0,     false, true,  true,
                                      false, false, false, true,  false, true};

std::vector<Variant> variants() {
  using bf16 = __nv_bfloat16;
  return {
      make_wgmma<__half, BwdWgmmaConfig<64, 128>>("wgmma_d64_br128"),
      make_wgmma<__half, BwdWgmmaConfig<128, 64>>("wgmma_d128_br64"),
      make_wgmma<bf16, BwdWgmmaConfig<64, 128>>("wgmma_bf16_d64_br128"),
      make_wgmma<bf16, BwdWgmmaConfig<128, 64>>("wgmma_bf16_d128_br64"),
      make_wgmma<__half, BwdWgmmaConfig<64, 128, true>>("wgmma_d64_br128_bulk"),
      make_wgmma<__half, BwdWgmmaConfig<128, 64, true>>("wgmma_d128_br64_bulk"),
      make_wgmma<bf16, BwdWgmmaConfig<64, 128, true>>("wgmma_bf16_d64_br128_bulk"),
      make_wgmma<bf16, BwdWgmmaConfig<128, 64, true>>("wgmma_bf16_d128_br64_bulk"),
      make<__half, BwdConfig<64, 64, 128, 8, 1, mask_per_entry>>("d64_br64_mask_per_entry"),
      make<__half, BwdConfig<64, 64, 128, 8, 1, base>>("d64_br64"),
      make<__half, BwdConfig<64, 64, 128, 8, 1, vec>>("d64_br64_vec"),
      make<__half, BwdConfig<64, 128, 128, 8, 1, vec>>("d64_br128_vec"),
      make<__half, BwdConfig<64, 128, 128, 8, 1, vec_split>>("d64_br128_vec_split"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, mask_per_entry>>("d128_br64_mask_per_entry"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, base>>("d128_br64"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, vec>>("d128_br64_vec"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, vec_split>>("d128_br64_vec_split"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, vec_u2>>("d128_br64_vec_u2"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, vec_split_u2>>("d128_br64_vec_split_u2"),
      make<__half, BwdConfig<128, 64, 128, 8, 1, vec_u1>>("d128_br64_vec_u1"),
      make<__half, BwdConfig<128, 32, 128, 8, 1, vec>>("d128_br32_vec"),
      make<__half, BwdConfig<64, 128, 128, 8, 1, vec_u2>>("d64_br128_vec_u2"),
      make<__half, BwdConfig<64, 128, 128, 8, 1, vec_u1>>("d64_br128_vec_u1"),
      make<bf16, BwdConfig<128, 64, 128, 8, 1, vec_u2>>("bf16_d128_br64_vec_u2"),
      make<bf16, BwdConfig<64, 128, 128, 8, 1, vec>>("bf16_d64_br128_vec"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, vec>>("2d_d64_br128"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, vec_u2>>("2d_d64_br128_u2"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, vec_u1>>("2d_d64_br128_u1"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, vec>>("2d_d64_br64"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, vec_mask_per_entry>>(
          "2d_d64_br64_mask_per_entry"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec>>("2d_d128_br64"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec_u2>>("2d_d128_br64_u2"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec_u2_mask_per_entry>>(
          "2d_d128_br64_u2_mask_per_entry"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec_u1>>("2d_d128_br64_u1"),
      make_2d<bf16, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, vec>>("2d_bf16_d64_br128"),
      make_2d<bf16, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec_u2>>("2d_bf16_d128_br64_u2"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, vec>>("2d_bf16_d64_br64"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, vec_dq_first>>("2d_d64_br64_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, vec_dq_first>>("2d_d64_br128_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 2, 4, 4, vec_dq_first>>(
          "2d_d64_br128_s2_dq_first"),  // FlashAttention-2's d 64 tiling: S 2 x 4 warps
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, vec_dq_first>>("2d_d128_br64_dq_first"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, fragments>>("2d_d128_br64_frag"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, fragments_dq_first>>(
          "2d_d128_br64_frag_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, fragments_dq_first>>(
          "2d_d64_br64_frag_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, fragments_dq_first>>(
          "2d_d64_br128_frag_dq_first"),
      make_2d<bf16, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, fragments_dq_first>>(
          "2d_bf16_d128_br64_frag_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, late_stat>>("2d_d64_br64_late_stat"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, late_stat>>("2d_d128_br64_late_stat"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, all_three>>("2d_d64_br64_all3"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, all_three>>("2d_d128_br64_all3"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, all_three>>("2d_d64_br128_all3"),
      make_2d<bf16, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, all_three>>("2d_bf16_d128_br64_all3"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, all_three>>("2d_bf16_d64_br64_all3"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, fragments_dq_first>>("2d_d64_rev3"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, fragments_dq_first>>("2d_d128_rev3"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, rev3_async_stats>>("2d_d64_rev3_async"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, rev3_async_stats>>(
          "2d_d128_rev3_async"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, rev3_async_stats>>(
          "2d_d64_br128_rev3_async"),
      make_2d<bf16, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, rev3_async_stats>>(
          "2d_bf16_d128_rev3_async"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, rev3_clock>>("2d_d64_rev3_clock"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, rev3_clock>>("2d_d128_rev3_clock"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, rev3_clock>>("2d_d64_br128_rev3_clock"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dp_first>>("2d_d64_dp_first"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, dp_first>>("2d_d128_dp_first"),
      make_2d<bf16, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, dp_first>>("2d_bf16_d128_dp_first"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dp_first>>("2d_bf16_d64_dp_first"),
      make_2d<__half, Bwd2dConfig<64, 128, 128, 8, 4, 4, 4, dp_first>>("2d_d64_br128_dp_first"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dp_first_clock>>(
          "2d_d64_dp_first_clock"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k>>("2d_d64_resident_k"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k>>("2d_bf16_d64_resident_k"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k_dp_first>>(
          "2d_d64_resident_k_dp_first"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, dp_first_clock>>(
          "2d_d128_dp_first_clock"),
      // split_kv: dK and dV each over 4 warps, 32 keys x d (KvWarpsN 4) or
      // 64 keys x d / 2 (KvWarpsN 2) a warp.
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k_split_kv>>("2d_d64_split_kv"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k_split_kv>>(
          "2d_bf16_d64_split_kv"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k_split_kv_dq_last>>(
          "2d_d64_split_kv_dq_last"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 2, 2, resident_k_split_kv>>(
          "2d_d64_split_kv_64keys"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 2, 2, dp_first_split_kv>>("2d_d128_split_kv"),
      make_2d<__half, Bwd2dConfig<128, 64, 128, 8, 2, 4, 2, dp_first_split_kv>>(
          "2d_d128_split_kv_32keys"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, resident_k_split_kv_dq_last>>(
          "2d_bf16_d64_split_kv_dq_last"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, rev6_clock>>("2d_d64_rev6_clock"),
      // dq_on_dv_warps: dV on warps 4-7, dK on 0-3, dQ [64, 64] on warps 4-7 alone.
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dq_on_dv>>("2d_d64_dq_on_dv"),
      make_2d<bf16, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dq_on_dv>>("2d_bf16_d64_dq_on_dv"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dq_on_dv_dq_first>>(
          "2d_d64_dq_on_dv_dq_first"),
      make_2d<__half, Bwd2dConfig<64, 64, 128, 8, 2, 4, 2, dq_on_dv_clock>>(
          "2d_d64_dq_on_dv_clock"),
      make<bf16, BwdConfig<128, 64, 128, 8, 1, vec_split>>("bf16_d128_br64_vec_split"),
  };
}

AttentionShape shape_of(int batch, int heads, int seq_len, int head_dim, bool causal, DType dtype) {
  AttentionShape s;
  s.batch = batch;
  s.heads = heads;
  s.seq_len = seq_len;
  s.head_dim = head_dim;
  s.causal = causal;
  s.dtype = dtype;
  return s;
}

std::size_t elements(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len * s.head_dim;
}
std::size_t rows(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len;
}

// Inputs, the forward's O (the reference's, in the dtype) and LSE, and outputs.
struct Tensors {
  DeviceBuffer q, k, v, d_o, o, lse, d_q, d_k, d_v, workspace;
  Tensors(const AttentionShape& s, std::uint64_t seed, cudaStream_t stream)
      : q(elements(s) * element_bytes(s.dtype)),
        k(q.bytes()),
        v(q.bytes()),
        d_o(q.bytes()),
        o(q.bytes()),
        lse(rows(s) * sizeof(float)),
        d_q(q.bytes()),
        d_k(q.bytes()),
        d_v(q.bytes()),
        workspace(fa2_bwd::workspace_bytes(s)) {
    const std::size_t n = elements(s);
    CFR_CUDA_CHECK(fill_random(q.data(), n, s.dtype, seed, Distribution::normal, stream));
    CFR_CUDA_CHECK(fill_random(k.data(), n, s.dtype, seed + 1, Distribution::normal, stream));
    CFR_CUDA_CHECK(fill_random(v.data(), n, s.dtype, seed + 2, Distribution::uniform, stream));
    CFR_CUDA_CHECK(fill_random(d_o.data(), n, s.dtype, seed + 3, Distribution::normal, stream));
    DeviceBuffer o32(n * sizeof(float));
    CFR_CUDA_CHECK(reference_forward(s, q.data(), k.data(), v.data(), o32.as<float>(),
                                     lse.as<float>(), stream));
    CFR_CUDA_CHECK(convert_from_fp32(o32.as<float>(), o.data(), n, s.dtype, stream));
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  cudaError_t launch(const Variant& variant, const AttentionShape& s, cudaStream_t stream) {
    const BackwardBuffers io{q.data(),        k.data(),   v.data(),   o.data(),  d_o.data(),
                             lse.as<float>(), d_q.data(), d_k.data(), d_v.data()};
    const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
    return variant.launch(s, io, context);
  }
};

// Worst rel L2 error of dQ, dK, dV against the reference; 1e9 on a launch error.
double check(const Variant& variant, const AttentionShape& s, cudaStream_t stream, bool& passed) {
  Tensors t(s, 4321 + s.seq_len, stream);
  const std::size_t n = elements(s);
  DeviceBuffer ref_dq(n * sizeof(float)), ref_dk(n * sizeof(float)), ref_dv(n * sizeof(float));
  CFR_CUDA_CHECK(reference_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(),
                                    ref_dq.as<float>(), ref_dk.as<float>(), ref_dv.as<float>(),
                                    stream));
  for (DeviceBuffer* b : {&t.d_q, &t.d_k, &t.d_v, &t.workspace}) {
    CFR_CUDA_CHECK(poison(b->data(), b->bytes(), stream));
  }
  const cudaError_t status = t.launch(variant, s, stream);
  if (status != cudaSuccess) {
    std::printf("    launch error: %s\n", cudaGetErrorString(status));
    passed = false;
    return 1e9;
  }
  const Tolerance tolerance = tolerance_for(s.dtype);
  passed = true;
  double worst = 0;
  const std::pair<const DeviceBuffer*, const DeviceBuffer*> outputs[] = {
      {&t.d_q, &ref_dq}, {&t.d_k, &ref_dk}, {&t.d_v, &ref_dv}};
  for (const auto& [out, ref] : outputs) {
    CheckResult err;
    CFR_CUDA_CHECK(compare_with_reference(out->data(), s.dtype, ref->as<float>(), n, stream, err));
    passed = passed && passes(err, tolerance);
    worst = std::max(worst, err.rel_l2_err);
  }
  return worst;
}

std::vector<double> time_cold(const Variant& variant, const AttentionShape& s, cudaStream_t stream,
                              measure::L2Flusher& flusher, int samples) {
  Tensors t(s, 99, stream);
  return gpu_tools::time_cold([&] { return t.launch(variant, s, stream); }, stream, flusher,
                              samples);
}

}  // namespace

// One launch on random inputs, nothing else on the device but the fills.
int run_once(const Variant& variant, int heads, int seq_len, bool causal) {
  measure::CudaStream stream;
  const AttentionShape s = shape_of(1, heads, seq_len, variant.head_dim, causal, variant.dtype);
  Tensors t(s, 5, stream.get());
  CFR_CUDA_CHECK(t.launch(variant, s, stream.get()));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return 0;
}

// Checked on ragged and exact lengths, both masks; timed only if it passed.
bool check_and_time(const Variant& variant, cudaStream_t stream, measure::L2Flusher& flusher) {
  bool all_passed = true;
  double worst = 0;
  for (int seq_len : {1, 17, 64, 200, 1000}) {
    for (bool causal : {false, true}) {
      const AttentionShape s =
          shape_of(seq_len == 64 ? 1 : 2, 3, seq_len, variant.head_dim, causal, variant.dtype);
      bool passed = false;
      const double err = check(variant, s, stream, passed);
      worst = std::max(worst, err);
      if (!passed) {
        std::printf("  %s FAILED at N=%d causal=%d (rel err %.3g)\n", variant.name.c_str(), seq_len,
                    causal, err);
        all_passed = false;
      }
    }
  }
  std::printf("%s: check %s, worst rel L2 %.2e (Br %d Bc %d warps %d)\n", variant.name.c_str(),
              all_passed ? "passed" : "FAILED", worst, variant.br, variant.bc, variant.warps);
  if (!all_passed) return false;
  for (int seq_len : {4096, 8192, 16384}) {
    for (bool causal : {false, true}) {
      const AttentionShape s = shape_of(1, 8, seq_len, variant.head_dim, causal, variant.dtype);
      const std::vector<double> samples = time_cold(variant, s, stream, flusher, 10);
      const double ms = median(samples);
      const double flops = 2.5 * 4.0 * s.batch * s.heads * double(s.seq_len) * s.seq_len *
                           s.head_dim * (causal ? 0.5 : 1.0);
      std::printf("%-26s %5d %6d %3d %7d %10.4f %8.1f ", variant.name.c_str(), seq_len, causal,
                  variant.head_dim, variant.smem, ms, flops / ms / 1e9);
      for (double x : samples) std::printf(" %.4f", x);
      std::printf("\n");
    }
  }
  return true;
}

// A *_clock variant's second launch (the first warms it), its warps'
// WarpClocks summed over the CTAs: cycles per Q block by warp and part, and
// the spread of the CTAs' loop cycles.
int print_clocks(const Variant& variant, int heads, int seq_len, bool causal) {
  using fa2_bwd::WarpClocks;
  measure::CudaStream stream;
  const AttentionShape s = shape_of(1, heads, seq_len, variant.head_dim, causal, variant.dtype);
  Tensors t(s, 5, stream.get());
  const std::size_t ctas =
      static_cast<std::size_t>(heads) * ((seq_len + variant.bc - 1) / variant.bc);
  DeviceBuffer records(ctas * variant.warps * sizeof(WarpClocks));
  WarpClocks* out = records.as<WarpClocks>();
  CFR_CUDA_CHECK(cudaMemcpyToSymbolAsync(fa2_bwd::warp_clocks_out, &out, sizeof(out), 0,
                                         cudaMemcpyHostToDevice, stream.get()));
  for (int launch = 0; launch < 2; ++launch) {
    CFR_CUDA_CHECK(cudaMemsetAsync(out, 0, records.bytes(), stream.get()));
    CFR_CUDA_CHECK(t.launch(variant, s, stream.get()));
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  std::vector<WarpClocks> host(ctas * variant.warps);
  CFR_CUDA_CHECK(cudaMemcpy(host.data(), out, records.bytes(), cudaMemcpyDeviceToHost));
  WarpClocks* none = nullptr;
  CFR_CUDA_CHECK(cudaMemcpyToSymbol(fa2_bwd::warp_clocks_out, &none, sizeof(none)));
  if (host.front().blocks == 0) {
    std::fprintf(stderr, "%s counts no clocks (BwdTuning::barrier_clock is off)\n",
                 variant.name.c_str());
    return 2;
  }

  using Part = unsigned WarpClocks::*;
  constexpr Part parts[] = {&WarpClocks::copy_wait,  &WarpClocks::top_wait, &WarpClocks::scores,
                            &WarpClocks::ds_wait,    &WarpClocks::dv,       &WarpClocks::dq_mma,
                            &WarpClocks::dq_atomics, &WarpClocks::dk};
  std::printf("%s B 1 H %d N %d causal %d: cycles per Q block (clock(), summed over %zu CTAs)\n",
              variant.name.c_str(), heads, seq_len, causal, ctas);
  std::printf("%4s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "warp", "copy_wait", "top_wait",
              "scores", "ds_wait", "dv", "dq_mma", "dq_atomic", "dk", "total", "prologue");
  std::vector<double> cta_cycles(ctas, 0.0);
  for (int w = 0; w < variant.warps; ++w) {
    double sums[std::size(parts)] = {};
    double blocks = 0, prologue = 0;
    for (std::size_t c = 0; c < ctas; ++c) {
      const WarpClocks& r = host[c * variant.warps + w];
      double total = 0;
      for (std::size_t p = 0; p < std::size(parts); ++p) {
        sums[p] += r.*parts[p];
        total += r.*parts[p];
      }
      blocks += r.blocks;
      prologue += r.prologue;
      if (w == 0) cta_cycles[c] = total + r.prologue;
    }
    double total = 0;
    std::printf("%4d", w);
    for (double x : sums) {
      std::printf(" %9.1f", x / blocks);
      total += x;
    }
    std::printf(" %9.1f %9.0f\n", total / blocks, prologue / ctas);
  }
  std::sort(cta_cycles.begin(), cta_cycles.end());
  std::printf("CTA loop cycles (warp 0, prologue included): min %.0f median %.0f max %.0f\n",
              cta_cycles.front(), cta_cycles[ctas / 2], cta_cycles.back());
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--clocks") {
    return gpu_tools::with_named_variant(variants(), argv[2], [&](const Variant& variant) {
      return print_clocks(variant, std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]) != 0);
    });
  }
  measure::CudaStream stream;
  measure::L2Flusher flusher(0);
  std::printf("%-26s %5s %6s %3s %7s %10s %8s  samples (ms)\n", "variant", "N", "causal", "d",
              "smem", "median ms", "TFLOPS");
  return gpu_tools::variant_tool_main(argc, argv, variants(), run_once, [&](const Variant& v) {
    return check_and_time(v, stream.get(), flusher);
  });
}
