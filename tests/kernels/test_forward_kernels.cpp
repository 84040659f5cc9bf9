// Every forward kernel against the fp32 reference on the test grid of
// attention_case.hpp (N in {1, 17, 64, 1000, 4097}, d in {32, 64, 128},
// causal and not, every dtype the kernel's catalog entry declares), with
// outputs poisoned before the launch; tolerances from tolerance_for(dtype).

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "roofline/kernel_catalog.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20260301;

// Launches `kernel` on poisoned outputs and checks O and L.
void check_forward(const ForwardKernel& kernel, const AttentionShape& shape, const Inputs& inputs,
                   const ForwardReference& reference, cudaStream_t stream, cublasHandle_t cublas) {
  INFO(kernel.name << ", " << describe(shape));
  DeviceBuffer o(tensor_bytes(shape));
  DeviceBuffer lse(row_count(shape) * sizeof(float));
  DeviceBuffer workspace(kernel.workspace_bytes(shape));
  CFR_CUDA_CHECK(poison(o.data(), o.bytes(), stream));
  CFR_CUDA_CHECK(poison(lse.data(), lse.bytes(), stream));
  const ForwardBuffers io{inputs.q.data(), inputs.k.data(), inputs.v.data(), o.data(),
                          lse.as<float>()};
  const LaunchContext context{stream, cublas, workspace.data(), workspace.bytes()};
  REQUIRE(kernel.launch(shape, io, context) == cudaSuccess);
  check_against_reference("O", o.data(), shape.dtype, reference.o.as<float>(),
                          tensor_elements(shape), shape.dtype, stream);
  check_against_reference("L", lse.data(), DType::fp32, reference.lse.as<float>(), row_count(shape),
                          shape.dtype, stream);
}

void check_on_test_grid(const KernelDescription& description) {
  const ForwardKernel* kernel = find_forward_kernel(description.name);
  REQUIRE(kernel != nullptr);
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (DType dtype : test_dtypes) {
    if (!description.dtypes.contains(dtype)) continue;
    for (int head_dim : test_head_dims) {
      for (int seq_len : test_seq_lens) {
        for (bool causal : {false, true}) {
          const AttentionShape shape = make_shape(dtype, seq_len, head_dim, causal);
          const Inputs inputs(shape, seed + static_cast<std::uint64_t>(seq_len), stream);
          const ForwardReference reference(shape, inputs, stream);
          check_forward(*kernel, shape, inputs, reference, stream, cublas);
        }
      }
    }
  }
}

TEST_CASE("naive matches the fp32 reference on the test grid", "[forward][naive]") {
  check_on_test_grid(naive_kernel);
}

TEST_CASE("fa1_scalar matches the fp32 reference on the test grid", "[forward][fa1_scalar]") {
  check_on_test_grid(fa1_scalar_kernel);
}

TEST_CASE("fa1_wmma matches the fp32 reference on the test grid", "[forward][fa1_wmma]") {
  check_on_test_grid(fa1_wmma_kernel);
}

// softmax_scale != 0 replaces 1/sqrt(d); 0.5 at d = 64 makes the scores 4x
// sharper than the default, so a kernel that ignored it would be far off.
TEST_CASE("every forward kernel applies an explicit softmax_scale", "[forward]") {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (const KernelDescription& description : kernel_catalog) {
    if (description.direction != Direction::forward) continue;
    const ForwardKernel* kernel = find_forward_kernel(description.name);
    REQUIRE(kernel != nullptr);
    for (bool causal : {false, true}) {
      AttentionShape shape = make_shape(DType::fp16, 200, 64, causal);
      shape.softmax_scale = 0.5f;
      const Inputs inputs(shape, seed + 7, stream);
      const ForwardReference reference(shape, inputs, stream);
      check_forward(*kernel, shape, inputs, reference, stream, cublas);
    }
  }
}

}  // namespace
}  // namespace cfr::kernels::testing
