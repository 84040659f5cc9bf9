// A shape a registered kernel does not support is refused with
// cudaErrorInvalidValue before anything is launched.

#include <catch2/catch.hpp>

#include <variant>
#include <vector>

#include "attention_case.hpp"
#include "kernels/kernel_registry.hpp"

namespace cfr::kernels::testing {
namespace {

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

// The kernel's first dtype and head dim, N = 16: a shape it supports.
AttentionShape valid_shape(const KernelDescription& kernel) {
  AttentionShape shape;
  shape.seq_len = 16;
  shape.head_dim = kernel.head_dims.front();
  shape.dtype = kernel.dtypes.fp16 ? DType::fp16 : kernel.dtypes.bf16 ? DType::bf16 : DType::fp32;
  return shape;
}

// Shapes `kernel` must refuse: each dtype it lacks, a head dim it lacks, no
// rows, no heads, heads no multiple of the K/V heads, and each served shape
// its ShapeSupport lacks (keys apart from queries, fewer K/V heads, pages).
std::vector<AttentionShape> unsupported_shapes(const KernelDescription& kernel) {
  std::vector<AttentionShape> shapes;
  for (DType dtype : test_dtypes) {
    if (kernel.dtypes.contains(dtype)) continue;
    shapes.push_back(valid_shape(kernel));
    shapes.back().dtype = dtype;
  }
  shapes.push_back(valid_shape(kernel));
  shapes.back().head_dim = kernel.head_dims.back() + 8;
  shapes.push_back(valid_shape(kernel));
  shapes.back().seq_len = 0;
  shapes.push_back(valid_shape(kernel));
  shapes.back().heads = 0;
  shapes.push_back(valid_shape(kernel));
  shapes.back().heads = 3;
  shapes.back().kv_heads = 2;
  const ShapeSupport& can = kernel.shapes;
  if (!can.kv_len) {
    shapes.push_back(valid_shape(kernel));
    shapes.back().kv_len = 32;
  }
  if (!can.kv_heads) {
    shapes.push_back(valid_shape(kernel));
    shapes.back().heads = 4;
    shapes.back().kv_heads = 2;
  }
  if (!can.paged) {
    shapes.push_back(valid_shape(kernel));
    shapes.back().page_size = 16;
  }
  return shapes;
}

cudaError_t launch(const KernelEntry& entry, const AttentionShape& shape,
                   const SpareBuffers& buffers, const LaunchContext& context) {
  if (const ForwardKernel* forward = entry.forward()) {
    return forward->launch(shape, buffers.forward(), context);
  }
  return entry.backward()->launch(shape, buffers.backward(), context);
}

std::size_t workspace_bytes(const KernelEntry& entry, const AttentionShape& shape) {
  return std::visit([&](const auto& launcher) { return launcher.workspace_bytes(shape); },
                    entry.launcher);
}

TEST_CASE("unsupported shapes are refused without a launch", "[registry]") {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  SpareBuffers buffers;
  const LaunchContext context{stream, cublas, buffers.workspace.data(), SpareBuffers::bytes};

  for (const KernelEntry* entry : registry().entries()) {
    INFO(entry->description.name);
    for (const AttentionShape& shape : unsupported_shapes(entry->description)) {
      INFO(describe(shape));
      CHECK(launch(*entry, shape, buffers, context) == cudaErrorInvalidValue);
    }
    // A workspace one byte short: the sweep checks memory before allocating,
    // so this only guards against a caller that did not.
    const AttentionShape shape = valid_shape(entry->description);
    if (const std::size_t needed = workspace_bytes(*entry, shape); needed > 0) {
      LaunchContext short_workspace = context;
      short_workspace.workspace_bytes = needed - 1;
      CHECK(launch(*entry, shape, buffers, short_workspace) == cudaErrorInvalidValue);
    }
  }

  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);  // nothing was launched and failed
}

}  // namespace
}  // namespace cfr::kernels::testing
