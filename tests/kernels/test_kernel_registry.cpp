// The registry: every catalog kernel is found under its catalog name in its
// direction, and a shape a kernel does not support is refused with
// cudaErrorInvalidValue before anything is launched.

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "roofline/kernel_catalog.hpp"

namespace cfr::kernels::testing {
namespace {

TEST_CASE("every catalog kernel has a launcher under its catalog name", "[registry]") {
  for (const KernelDescription& description : kernel_catalog) {
    INFO(description.name);
    if (description.direction == Direction::forward) {
      const ForwardKernel* kernel = find_forward_kernel(description.name);
      REQUIRE(kernel != nullptr);
      CHECK(kernel->name == description.name);
      CHECK(find_backward_kernel(description.name) == nullptr);
    } else {
      const BackwardKernel* kernel = find_backward_kernel(description.name);
      REQUIRE(kernel != nullptr);
      CHECK(kernel->name == description.name);
      CHECK(find_forward_kernel(description.name) == nullptr);
    }
  }
  CHECK(find_forward_kernel("fa3_wgmma") == nullptr);
  CHECK(find_backward_kernel("") == nullptr);
}

// Buffers large enough for every shape below, so only the shape is at fault.
struct SpareBuffers {
  static constexpr std::size_t bytes = 1 << 20;
  DeviceBuffer q{bytes}, k{bytes}, v{bytes}, o{bytes}, d_o{bytes}, lse{bytes};
  DeviceBuffer d_q{bytes}, d_k{bytes}, d_v{bytes}, workspace{bytes};

  ForwardBuffers forward() const {
    return {q.data(), k.data(), v.data(), o.data(), lse.as<float>()};
  }
  BackwardBuffers backward() const {
    return {q.data(),        k.data(),   v.data(),   o.data(),  d_o.data(),
            lse.as<float>(), d_q.data(), d_k.data(), d_v.data()};
  }
};

AttentionShape valid_shape() {
  AttentionShape shape;
  shape.seq_len = 16;
  shape.head_dim = 64;
  shape.dtype = DType::fp16;
  return shape;
}

TEST_CASE("unsupported shapes are refused without a launch", "[registry]") {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  SpareBuffers buffers;
  const LaunchContext context{stream, cublas, buffers.workspace.data(), SpareBuffers::bytes};

  const ForwardKernel* wmma = find_forward_kernel(fa1_wmma_kernel.name);
  REQUIRE(wmma != nullptr);
  AttentionShape fp32 = valid_shape();
  fp32.dtype = DType::fp32;
  CHECK(wmma->launch(fp32, buffers.forward(), context) == cudaErrorInvalidValue);

  for (const KernelDescription& description : kernel_catalog) {
    INFO(description.name);
    AttentionShape odd_head_dim = valid_shape();
    odd_head_dim.head_dim = 48;
    AttentionShape empty = valid_shape();
    empty.seq_len = 0;
    AttentionShape no_heads = valid_shape();
    no_heads.heads = 0;
    for (const AttentionShape& shape : {odd_head_dim, empty, no_heads}) {
      INFO(describe(shape));
      if (description.direction == Direction::forward) {
        CHECK(find_forward_kernel(description.name)->launch(shape, buffers.forward(), context) ==
              cudaErrorInvalidValue);
      } else {
        CHECK(find_backward_kernel(description.name)->launch(shape, buffers.backward(), context) ==
              cudaErrorInvalidValue);
      }
    }
  }

  // A workspace one byte short: the sweep checks memory before allocating, so
  // this only guards against a caller that did not.
  const ForwardKernel* naive = find_forward_kernel(naive_kernel.name);
  REQUIRE(naive != nullptr);
  const AttentionShape shape = valid_shape();
  LaunchContext short_workspace = context;
  short_workspace.workspace_bytes = naive->workspace_bytes(shape) - 1;
  CHECK(naive->launch(shape, buffers.forward(), short_workspace) == cudaErrorInvalidValue);
  const BackwardKernel* backward = find_backward_kernel(fa1_backward_kernel.name);
  REQUIRE(backward != nullptr);
  short_workspace.workspace_bytes = backward->workspace_bytes(shape) - 1;
  CHECK(backward->launch(shape, buffers.backward(), short_workspace) == cudaErrorInvalidValue);

  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);  // nothing was launched and failed
}

}  // namespace
}  // namespace cfr::kernels::testing
