// Every registered backward kernel against the fp32 reference backward on
// the test grid of attention_case.hpp, every dtype and head dim of the grid it
// declares, and on GQA and MQA shapes where it takes them (dK and dV summed
// over a K/V head's query heads); O and L come from the reference forward, O
// rounded to the I/O dtype as a real backward would receive it; and what
// fa1_bwd promises of its own: determinism; and fa2_bwd's own: a workspace of
// any contents, used again, and the smaller tile sm_86 and sm_89 run.

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "kernels/fa2_backward_for_arch.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20260401;

// dQ shaped as Q; dK and dV as K and V ([batch, kv_heads, N, d]).
struct BackwardOutputs {
  explicit BackwardOutputs(const AttentionShape& shape)
      : d_q(tensor_bytes(shape)),
        d_k(kv_elements(shape) * element_bytes(shape.dtype)),
        d_v(kv_elements(shape) * element_bytes(shape.dtype)) {}
  DeviceBuffer d_q, d_k, d_v;
};

// Launches `kernel` on poisoned outputs; O is the reference O in the I/O dtype.
void run_backward(const BackwardKernel& kernel, const AttentionShape& shape, const Inputs& inputs,
                  const ForwardReference& forward, BackwardOutputs& out, cudaStream_t stream) {
  DeviceBuffer o(tensor_bytes(shape));
  CFR_CUDA_CHECK(convert_from_fp32(forward.o.as<float>(), o.data(), tensor_elements(shape),
                                   shape.dtype, stream));
  for (DeviceBuffer* buffer : {&out.d_q, &out.d_k, &out.d_v}) {
    CFR_CUDA_CHECK(poison(buffer->data(), buffer->bytes(), stream));
  }
  DeviceBuffer workspace(kernel.workspace_bytes(shape));
  const BackwardBuffers io{inputs.q.data(), inputs.k.data(),   inputs.v.data(),
                           o.data(),        inputs.d_o.data(), forward.lse.as<float>(),
                           out.d_q.data(),  out.d_k.data(),    out.d_v.data()};
  const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
  REQUIRE(kernel.launch(shape, io, context) == cudaSuccess);
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void check_outputs(const AttentionShape& shape, const BackwardReference& reference,
                   const BackwardOutputs& out, cudaStream_t stream) {
  const std::size_t kv_count = kv_elements(shape);
  check_against_reference("dQ", out.d_q.data(), shape.dtype, reference.d_q.as<float>(),
                          tensor_elements(shape), shape.dtype, stream);
  check_against_reference("dK", out.d_k.data(), shape.dtype, reference.d_k.as<float>(), kv_count,
                          shape.dtype, stream);
  check_against_reference("dV", out.d_v.data(), shape.dtype, reference.d_v.as<float>(), kv_count,
                          shape.dtype, stream);
}

// `kernel` on `shape` against the reference backward.
void check_shape(const BackwardKernel& kernel, const AttentionShape& shape,
                 std::uint64_t shape_seed, cudaStream_t stream) {
  const Inputs inputs(shape, shape_seed, stream);
  const ForwardReference forward(shape, inputs, stream);
  const BackwardReference reference(shape, inputs, stream);
  BackwardOutputs out(shape);
  run_backward(kernel, shape, inputs, forward, out, stream);
  check_outputs(shape, reference, out, stream);
}

void check_on_test_grid(const KernelEntry& entry) {
  measure::CudaStream stream;
  for (DType dtype : test_dtypes) {
    if (!entry.description.dtypes.contains(dtype)) continue;
    for (int head_dim : test_head_dims) {
      if (!entry.description.supports_head_dim(head_dim)) continue;
      for (int seq_len : test_seq_lens) {
        for (bool causal : {false, true}) {
          const AttentionShape shape = make_shape(dtype, seq_len, head_dim, causal);
          INFO(entry.description.name << ", " << describe(shape));
          check_shape(*entry.backward(), shape, seed + static_cast<std::uint64_t>(seq_len), stream);
        }
      }
    }
  }
}

// GQA and MQA: 4 query heads over 2 K/V heads and over 1, odd lengths and
// an exact one, both masks.
struct Grouping {
  int heads, kv_heads;
};
constexpr Grouping groupings[] = {{4, 2}, {4, 1}};
const std::vector<int> gqa_seq_lens{1, 17, 128, 1000, 4097};

AttentionShape grouped_shape(DType dtype, int seq_len, int head_dim, bool causal,
                             Grouping grouping) {
  AttentionShape shape = make_shape(dtype, seq_len, head_dim, causal);
  shape.heads = grouping.heads;
  shape.kv_heads = grouping.kv_heads;
  return shape;
}

TEST_CASE("every backward kernel that takes GQA matches the reference backward on GQA shapes",
          "[backward][gqa]") {
  measure::CudaStream stream;
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    const KernelDescription& description = entry->description;
    if (!description.shapes.kv_heads) continue;
    for (DType dtype : test_dtypes) {
      if (!description.dtypes.contains(dtype)) continue;
      for (int head_dim : test_head_dims) {
        if (!description.supports_head_dim(head_dim)) continue;
        for (int seq_len : gqa_seq_lens) {
          for (bool causal : {false, true}) {
            for (const Grouping grouping : groupings) {
              const AttentionShape shape =
                  grouped_shape(dtype, seq_len, head_dim, causal, grouping);
              REQUIRE(takes(*entry, shape));
              INFO(description.name << ", " << describe(shape));
              check_shape(*entry->backward(), shape, seed + 3 + static_cast<std::uint64_t>(seq_len),
                          stream);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("every backward kernel matches the fp32 reference backward on the test grid",
          "[backward]") {
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    DYNAMIC_SECTION(entry->description.name) {
      check_on_test_grid(*entry);
    }
  }
}

const BackwardKernel& fa1_backward() {
  const BackwardKernel* kernel = find_backward_kernel(fa1_backward_kernel.name);
  REQUIRE(kernel != nullptr);
  return *kernel;
}

// No atomics: every output row has one owner, so two runs agree bit for bit.
TEST_CASE("fa1_bwd is deterministic", "[backward]") {
  measure::CudaStream stream;
  const AttentionShape shape = make_shape(DType::fp32, 1000, 64, true);
  const Inputs inputs(shape, seed, stream);
  const ForwardReference forward(shape, inputs, stream);
  BackwardOutputs first(shape);
  BackwardOutputs second(shape);
  run_backward(fa1_backward(), shape, inputs, forward, first, stream);
  run_backward(fa1_backward(), shape, inputs, forward, second, stream);
  CHECK(to_host(first.d_q, stream) == to_host(second.d_q, stream));
  CHECK(to_host(first.d_k, stream) == to_host(second.d_k, stream));
  CHECK(to_host(first.d_v, stream) == to_host(second.d_v, stream));
}

// 0.5 instead of 1/sqrt(64): a kernel that ignored it would be far off. In
// fp32 where the kernel has it, so only the scale can be at fault.
TEST_CASE("every backward kernel applies an explicit softmax_scale", "[backward]") {
  measure::CudaStream stream;
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    const KernelDescription& description = entry->description;
    const DType dtype = description.dtypes.fp32 ? DType::fp32 : DType::fp16;
    const int head_dim = description.supports_head_dim(64) ? 64 : description.head_dims.front();
    for (bool causal : {false, true}) {
      AttentionShape shape = make_shape(dtype, 200, head_dim, causal);
      shape.softmax_scale = 0.5f;
      INFO(description.name << ", " << describe(shape));
      check_shape(*entry->backward(), shape, seed + 7, stream);
    }
  }
}

// fa2_bwd's entry when this device runs it; null (and a WARN) otherwise.
const KernelEntry* runnable_fa2_backward() {
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    if (entry->description.name == fa2_backward_kernel.name) return entry;
  }
  return nullptr;
}

// fa2_bwd's pre-pass zeroes its dQ accumulator: a workspace full of NaN, and
// the same workspace again, give the reference's gradients both times.
TEST_CASE("fa2_bwd takes a workspace of any contents, twice", "[backward]") {
  const KernelEntry* entry = runnable_fa2_backward();
  if (entry == nullptr) return;
  measure::CudaStream stream;
  const AttentionShape shape = make_shape(DType::fp16, 333, 64, true);
  const Inputs inputs(shape, seed + 11, stream);
  const ForwardReference forward(shape, inputs, stream);
  const BackwardReference reference(shape, inputs, stream);
  const BackwardKernel& kernel = *entry->backward();
  DeviceBuffer o(tensor_bytes(shape));
  CFR_CUDA_CHECK(convert_from_fp32(forward.o.as<float>(), o.data(), tensor_elements(shape),
                                   shape.dtype, stream));
  DeviceBuffer workspace(kernel.workspace_bytes(shape));
  CFR_CUDA_CHECK(poison(workspace.data(), workspace.bytes(), stream));
  for (int run = 0; run < 2; ++run) {
    INFO("run " << run);
    BackwardOutputs out(shape);
    const BackwardBuffers io{inputs.q.data(), inputs.k.data(),   inputs.v.data(),
                             o.data(),        inputs.d_o.data(), forward.lse.as<float>(),
                             out.d_q.data(),  out.d_k.data(),    out.d_v.data()};
    const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
    REQUIRE(kernel.launch(shape, io, context) == cudaSuccess);
    check_outputs(shape, reference, out, stream);
  }
}

// The d = 128 tile sm_86 and sm_89 get (Br 32 over Bc 64, 4 warps: 69 KB of
// shared memory): every config is compiled for every architecture the kernel
// is built for, so this device runs it too.
TEST_CASE("fa2_bwd at sm_86's config matches the reference backward", "[backward]") {
  const KernelEntry* entry = runnable_fa2_backward();
  if (entry == nullptr) return;
  CHECK(fa2_backward_kernel.tile_for(128, {8, 6}) == TileShape{32, 64});
  const BackwardKernel sm86{
      entry->backward()->workspace_bytes,
      [](const AttentionShape& shape, const BackwardBuffers& io, const LaunchContext& context) {
        return launch_fa2_backward_for_arch({8, 6}, shape, io, context);
      }};
  measure::CudaStream stream;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (int seq_len : test_seq_lens) {
      for (bool causal : {false, true}) {
        const AttentionShape shape = make_shape(dtype, seq_len, 128, causal);
        INFO("fa2_bwd at sm_86, " << describe(shape));
        check_shape(sm86, shape, seed + static_cast<std::uint64_t>(seq_len), stream);
        // Its GQA instantiation too, on two of the lengths.
        if (seq_len != 17 && seq_len != 1000) continue;
        for (const Grouping grouping : groupings) {
          const AttentionShape grouped = grouped_shape(dtype, seq_len, 128, causal, grouping);
          INFO("fa2_bwd at sm_86, " << describe(grouped));
          check_shape(sm86, grouped, seed + 3 + static_cast<std::uint64_t>(seq_len), stream);
        }
      }
    }
  }
}

}  // namespace
}  // namespace cfr::kernels::testing
