// The tiled references (kernels/tiled_reference.hpp), which the sweep checks
// with, against the obvious ones (attention_api.hpp: a CTA per row, double
// sums), which test_reference_attention.cpp checks against the host: on
// ragged and odd shapes (N 1, 17, 4097; Nq != Nk with the bottom-right mask;
// GQA and MQA; head dims 32, 64, 128 and 80, which the tiles pad; every
// dtype). Both read the same inputs and write fp32, so they differ only by
// fp32 sums against double ones: 1e-5 relative for the forward, 2e-5 for the
// backward, whose dS = P (dP - D) cancels part of dP. A sampled run must give
// the full run's rows.
#include <vector>

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "kernels/tiled_reference.hpp"
#include "roofline/model/check_sample.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20261907;
constexpr double forward_tolerance = 1e-5;
constexpr double backward_tolerance = 2e-5;

AttentionShape attention_shape(DType dtype, int batch, int heads, int kv_heads, int seq_len,
                               int kv_len, int head_dim, bool causal) {
  AttentionShape shape;
  shape.batch = batch;
  shape.heads = heads;
  shape.kv_heads = kv_heads;
  shape.seq_len = seq_len;
  shape.kv_len = kv_len;
  shape.head_dim = head_dim;
  shape.causal = causal;
  shape.dtype = dtype;
  return shape;
}

// The shapes both references are compared on, for one dtype.
std::vector<AttentionShape> compared_shapes(DType dtype) {
  std::vector<AttentionShape> shapes;
  for (bool causal : {false, true}) {
    for (int head_dim : {32, 64, 128}) {
      for (int n : {1, 17, 4097})
        shapes.push_back(attention_shape(dtype, 1, 2, 2, n, n, head_dim, causal));
    }
    shapes.push_back(attention_shape(dtype, 2, 3, 3, 100, 100, 80, causal));    // padded head dim
    shapes.push_back(attention_shape(dtype, 1, 2, 2, 17, 100, 64, causal));     // Nq < Nk
    shapes.push_back(attention_shape(dtype, 2, 4, 4, 1, 4097, 128, causal));    // decode
    shapes.push_back(attention_shape(dtype, 1, 8, 2, 257, 257, 64, causal));    // GQA
    shapes.push_back(attention_shape(dtype, 2, 4, 1, 130, 1000, 128, causal));  // MQA, Nq < Nk
  }
  shapes.push_back(attention_shape(dtype, 1, 2, 2, 300, 65, 32, false));  // Nq > Nk, no mask
  return shapes;
}

// rel L2 of `got` against `want` (fp32 both, on the device), and the
// largest error against max |want|.
void check_close(const char* tensor, const DeviceBuffer& got, const DeviceBuffer& want,
                 double tolerance, cudaStream_t stream) {
  CheckResult result;
  CFR_CUDA_CHECK(compare_with_reference(got.data(), DType::fp32, want.as<float>(),
                                        want.bytes() / sizeof(float), stream, result));
  INFO(tensor << ": rel_l2_err " << result.rel_l2_err << ", max_abs_err " << result.max_abs_err
              << " of max |ref| " << result.ref_max_abs);
  CHECK(result.all_finite);
  CHECK(result.rel_l2_err <= tolerance);
  CHECK(result.max_abs_err <= 10 * tolerance * result.scale());
}

DeviceBuffer floats(std::size_t count) {
  return DeviceBuffer(count * sizeof(float));
}

// `full`'s rows `rows` of each of `heads` heads, gathered as a sampled run lays them out.
DeviceBuffer gathered(const DeviceBuffer& full, std::size_t heads, int rows_per_head,
                      const DeviceBuffer& rows, int count, int width, cudaStream_t stream) {
  DeviceBuffer out = floats(heads * static_cast<std::size_t>(count * width));
  CFR_CUDA_CHECK(gather_rows(full.data(), out.data(), DType::fp32, heads, rows_per_head,
                             rows.as<int>(), count, width, stream));
  return out;
}

TEST_CASE("the tiled forward reference matches the obvious one", "[reference][tiled]") {
  measure::CudaStream stream;
  for (DType dtype : test_dtypes) {
    for (const AttentionShape& shape : compared_shapes(dtype)) {
      INFO(describe(shape));
      const Inputs inputs(shape, seed, stream);
      const ForwardReference obvious(shape, inputs, stream);
      DeviceBuffer o = floats(tensor_elements(shape));
      DeviceBuffer lse = floats(row_count(shape));
      CFR_CUDA_CHECK(poison(o.data(), o.bytes(), stream));
      CFR_CUDA_CHECK(poison(lse.data(), lse.bytes(), stream));
      CFR_CUDA_CHECK(tiled_reference_forward(shape, inputs.q.data(), inputs.k.data(),
                                             inputs.v.data(), o.as<float>(), lse.as<float>(), {},
                                             stream));
      check_close("O", o, obvious.o, forward_tolerance, stream);
      check_close("LSE", lse, obvious.lse, forward_tolerance, stream);
    }
  }
}

TEST_CASE("the streamed backward reference matches the obvious one", "[reference][tiled]") {
  measure::CudaStream stream;
  for (DType dtype : test_dtypes) {
    for (const AttentionShape& shape : compared_shapes(dtype)) {
      INFO(describe(shape));
      const Inputs inputs(shape, seed + 1, stream);
      const BackwardReference obvious(shape, inputs, stream);
      DeviceBuffer d_q = floats(tensor_elements(shape));
      DeviceBuffer d_k = floats(kv_elements(shape));
      DeviceBuffer d_v = floats(kv_elements(shape));
      for (DeviceBuffer* out : {&d_q, &d_k, &d_v})
        CFR_CUDA_CHECK(poison(out->data(), out->bytes(), stream));
      CFR_CUDA_CHECK(tiled_reference_backward(shape, inputs.q.data(), inputs.k.data(),
                                              inputs.v.data(), inputs.d_o.data(), d_q.as<float>(),
                                              d_k.as<float>(), d_v.as<float>(), {}, {}, stream));
      check_close("dQ", d_q, obvious.d_q, backward_tolerance, stream);
      check_close("dK", d_k, obvious.d_k, backward_tolerance, stream);
      check_close("dV", d_v, obvious.d_v, backward_tolerance, stream);
    }
  }
}

// A sub-sampled check compares the reference of the sampled rows with the
// kernel's rows gathered: the sampled reference must be the full one's rows.
TEST_CASE("the tiled references over sampled rows give the full run's rows", "[reference][tiled]") {
  measure::CudaStream stream;
  for (bool causal : {false, true}) {
    // Nq < Nk, GQA, a padded head dim: every index the lists go through.
    const AttentionShape shape = attention_shape(DType::bf16, 2, 4, 2, 3000, 4100, 96, causal);
    INFO(describe(shape));
    const Inputs inputs(shape, seed + 2, stream);
    const CheckSample sample{seed, 700, 900};
    const AttentionProblem problem = problem_of(shape);
    const std::vector<int> query_list = sampled_query_rows(problem, sample);
    const std::vector<int> key_list = sampled_key_rows(problem, sample);
    const DeviceBuffer query_rows = ints_on_device(query_list, stream);
    const DeviceBuffer key_rows = ints_on_device(key_list, stream);
    const ReferenceRows queries{query_rows.as<int>(), 700};
    const ReferenceRows keys{key_rows.as<int>(), 900};
    const std::size_t heads = row_count(shape) / 3000;
    const std::size_t kv_heads = kv_elements(shape) / (4100 * 96);
    const int d = shape.head_dim;

    DeviceBuffer o = floats(tensor_elements(shape));
    DeviceBuffer lse = floats(row_count(shape));
    CFR_CUDA_CHECK(tiled_reference_forward(shape, inputs.q.data(), inputs.k.data(), inputs.v.data(),
                                           o.as<float>(), lse.as<float>(), {}, stream));
    DeviceBuffer sampled_o = floats(heads * 700 * d);
    DeviceBuffer sampled_lse = floats(heads * 700);
    CFR_CUDA_CHECK(tiled_reference_forward(shape, inputs.q.data(), inputs.k.data(), inputs.v.data(),
                                           sampled_o.as<float>(), sampled_lse.as<float>(), queries,
                                           stream));
    check_close("O", sampled_o, gathered(o, heads, 3000, query_rows, 700, d, stream), 1e-6, stream);
    check_close("LSE", sampled_lse, gathered(lse, heads, 3000, query_rows, 700, 1, stream), 1e-6,
                stream);

    DeviceBuffer d_q = floats(tensor_elements(shape));
    DeviceBuffer d_k = floats(kv_elements(shape));
    DeviceBuffer d_v = floats(kv_elements(shape));
    CFR_CUDA_CHECK(tiled_reference_backward(shape, inputs.q.data(), inputs.k.data(),
                                            inputs.v.data(), inputs.d_o.data(), d_q.as<float>(),
                                            d_k.as<float>(), d_v.as<float>(), {}, {}, stream));
    DeviceBuffer sampled_dq = floats(heads * 700 * d);
    DeviceBuffer sampled_dk = floats(kv_heads * 900 * d);
    DeviceBuffer sampled_dv = floats(kv_heads * 900 * d);
    CFR_CUDA_CHECK(tiled_reference_backward(shape, inputs.q.data(), inputs.k.data(),
                                            inputs.v.data(), inputs.d_o.data(),
                                            sampled_dq.as<float>(), sampled_dk.as<float>(),
                                            sampled_dv.as<float>(), queries, keys, stream));
    check_close("dQ", sampled_dq, gathered(d_q, heads, 3000, query_rows, 700, d, stream), 1e-6,
                stream);
    check_close("dK", sampled_dk, gathered(d_k, kv_heads, 4100, key_rows, 900, d, stream), 1e-6,
                stream);
    check_close("dV", sampled_dv, gathered(d_v, kv_heads, 4100, key_rows, 900, d, stream), 1e-6,
                stream);
  }
}

TEST_CASE("the tiled references refuse what they do not take", "[reference][tiled]") {
  measure::CudaStream stream;
  AttentionShape wide = attention_shape(DType::fp16, 1, 1, 1, 16, 16, 256, false);
  CHECK_FALSE(tiled_reference_supports(wide));
  AttentionShape paged = attention_shape(DType::fp16, 1, 1, 1, 16, 16, 64, false);
  CHECK(tiled_reference_supports(paged));
  paged.page_size = 16;
  CHECK_FALSE(tiled_reference_supports(paged));
  const AttentionShape more_queries_causal =
      attention_shape(DType::fp16, 1, 1, 1, 32, 16, 64, true);
  CHECK_FALSE(tiled_reference_supports(more_queries_causal));
  float* none = nullptr;
  CHECK(tiled_reference_forward(wide, none, none, none, none, none, {}, stream) ==
        cudaErrorInvalidValue);
  CHECK(tiled_reference_backward(wide, none, none, none, none, none, none, none, {}, {}, stream) ==
        cudaErrorInvalidValue);
}

}  // namespace
}  // namespace cfr::kernels::testing
