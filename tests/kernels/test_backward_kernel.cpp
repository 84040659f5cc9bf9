// fa1_bwd against the fp32 reference backward on the test grid of
// attention_case.hpp, every dtype; O and L come from the reference forward,
// O rounded to the I/O dtype as a real backward would receive it.

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "roofline/kernel_catalog.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20260401;

struct BackwardOutputs {
  explicit BackwardOutputs(const AttentionShape& shape)
      : d_q(tensor_bytes(shape)), d_k(tensor_bytes(shape)), d_v(tensor_bytes(shape)) {}
  DeviceBuffer d_q, d_k, d_v;
};

// Launches fa1_bwd on poisoned outputs; O is the reference O in the I/O dtype.
void run_backward(const AttentionShape& shape, const Inputs& inputs,
                  const ForwardReference& forward, BackwardOutputs& out, cudaStream_t stream) {
  const BackwardKernel* kernel = find_backward_kernel(fa1_backward_kernel.name);
  REQUIRE(kernel != nullptr);
  DeviceBuffer o(tensor_bytes(shape));
  CFR_CUDA_CHECK(convert_from_fp32(forward.o.as<float>(), o.data(), tensor_elements(shape),
                                   shape.dtype, stream));
  for (DeviceBuffer* buffer : {&out.d_q, &out.d_k, &out.d_v}) {
    CFR_CUDA_CHECK(poison(buffer->data(), buffer->bytes(), stream));
  }
  DeviceBuffer workspace(kernel->workspace_bytes(shape));
  const BackwardBuffers io{inputs.q.data(), inputs.k.data(),   inputs.v.data(),
                           o.data(),        inputs.d_o.data(), forward.lse.as<float>(),
                           out.d_q.data(),  out.d_k.data(),    out.d_v.data()};
  const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
  REQUIRE(kernel->launch(shape, io, context) == cudaSuccess);
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

TEST_CASE("fa1_bwd matches the fp32 reference backward on the test grid", "[backward]") {
  measure::CudaStream stream;
  for (DType dtype : test_dtypes) {
    for (int head_dim : test_head_dims) {
      for (int seq_len : test_seq_lens) {
        for (bool causal : {false, true}) {
          const AttentionShape shape = make_shape(dtype, seq_len, head_dim, causal);
          INFO("fa1_bwd, " << describe(shape));
          const Inputs inputs(shape, seed + static_cast<std::uint64_t>(seq_len), stream);
          const ForwardReference forward(shape, inputs, stream);
          const BackwardReference reference(shape, inputs, stream);
          BackwardOutputs out(shape);
          run_backward(shape, inputs, forward, out, stream);
          const std::size_t count = tensor_elements(shape);
          check_against_reference("dQ", out.d_q.data(), dtype, reference.d_q.as<float>(), count,
                                  dtype, stream);
          check_against_reference("dK", out.d_k.data(), dtype, reference.d_k.as<float>(), count,
                                  dtype, stream);
          check_against_reference("dV", out.d_v.data(), dtype, reference.d_v.as<float>(), count,
                                  dtype, stream);
        }
      }
    }
  }
}

// No atomics: every output row has one owner, so two runs agree bit for bit.
TEST_CASE("fa1_bwd is deterministic", "[backward]") {
  measure::CudaStream stream;
  const AttentionShape shape = make_shape(DType::fp32, 1000, 64, true);
  const Inputs inputs(shape, seed, stream);
  const ForwardReference forward(shape, inputs, stream);
  BackwardOutputs first(shape);
  BackwardOutputs second(shape);
  run_backward(shape, inputs, forward, first, stream);
  run_backward(shape, inputs, forward, second, stream);
  CHECK(to_host(first.d_q, stream) == to_host(second.d_q, stream));
  CHECK(to_host(first.d_k, stream) == to_host(second.d_k, stream));
  CHECK(to_host(first.d_v, stream) == to_host(second.d_v, stream));
}

TEST_CASE("fa1_bwd applies an explicit softmax_scale", "[backward]") {
  measure::CudaStream stream;
  for (bool causal : {false, true}) {
    AttentionShape shape = make_shape(DType::fp32, 200, 64, causal);
    shape.softmax_scale = 0.5f;
    INFO("fa1_bwd, " << describe(shape));
    const Inputs inputs(shape, seed + 7, stream);
    const ForwardReference forward(shape, inputs, stream);
    const BackwardReference reference(shape, inputs, stream);
    BackwardOutputs out(shape);
    run_backward(shape, inputs, forward, out, stream);
    const std::size_t count = tensor_elements(shape);
    check_against_reference("dQ", out.d_q.data(), DType::fp32, reference.d_q.as<float>(), count,
                            DType::fp32, stream);
    check_against_reference("dK", out.d_k.data(), DType::fp32, reference.d_k.as<float>(), count,
                            DType::fp32, stream);
    check_against_reference("dV", out.d_v.data(), DType::fp32, reference.d_v.as<float>(), count,
                            DType::fp32, stream);
  }
}

}  // namespace
}  // namespace cfr::kernels::testing
