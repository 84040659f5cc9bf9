// Every registered backward kernel against the fp32 reference backward on
// the test grid of attention_case.hpp, every dtype and head dim of the grid it
// declares, and on GQA and MQA shapes where it takes them (dK and dV summed
// over a K/V head's query heads), and a refusal with the catalog's reason
// where it does not; O and L come from the reference forward, O rounded to
// the I/O dtype as a real backward would receive it; and what fa1_bwd
// promises of its own: determinism; and fa2_bwd's, fa2_bwd_2d's and fa3_bwd's
// own: a workspace of any contents, used again; and the smaller tile sm_86
// and sm_89 run (fa2_bwd, fa2_bwd_2d).

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "kernels/current_device.hpp"
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

// A backward kernel without GQA (fa1_bwd, fa2_bwd_2d: square only) refuses
// the grouped shapes before it launches anything, and the sweep's reason for
// skipping such a row names the shape.
TEST_CASE("every backward kernel without GQA refuses GQA shapes, with the catalog's reason",
          "[backward][gqa]") {
  measure::CudaStream stream;
  int refusing = 0;
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    const KernelDescription& description = entry->description;
    if (description.shapes.kv_heads) continue;
    ++refusing;
    const DType dtype = description.dtypes.fp16 ? DType::fp16 : DType::fp32;
    const AttentionShape shape =
        grouped_shape(dtype, 128, description.head_dims.front(), true, Grouping{4, 2});
    INFO(description.name << ", " << describe(shape));
    CHECK(shape_reason(description, problem_of(shape)) ==
          std::string(description.name) +
              " takes as many K/V heads as query heads (kv_heads 2 != heads 4)");
    const Inputs inputs(shape, seed, stream);
    BackwardOutputs out(shape);
    DeviceBuffer o(tensor_bytes(shape)), lse(tensor_elements(shape) * sizeof(float));
    DeviceBuffer workspace(entry->backward()->workspace_bytes(shape));
    const BackwardBuffers io{inputs.q.data(), inputs.k.data(),   inputs.v.data(),
                             o.data(),        inputs.d_o.data(), lse.as<float>(),
                             out.d_q.data(),  out.d_k.data(),    out.d_v.data()};
    const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
    CHECK(entry->backward()->launch(shape, io, context) == cudaErrorInvalidValue);
  }
  CHECK(refusing > 0);  // fa1_bwd runs wherever a backward kernel does
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("every backward kernel matches the fp32 reference backward on the test grid",
          "[backward]") {
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    DYNAMIC_SECTION(entry->description.name) {
      check_on_test_grid(*entry);
    }
  }
}

// The causal main launch walks heads fastest in groups of K/V heads that
// fill the GPU (the catalog's causal_grid, kernels/fa2_backward.cuh
// main_grid); the test grid's few heads make one group. These shapes make
// several on any GPU of 8-132 SMs (9 K/V blocks of 128 keys, 18 of 64 a
// head), so each CTA must find its head from the group index too.
TEST_CASE("the backwards' causal grid in several head groups matches the reference backward",
          "[backward]") {
  measure::CudaStream stream;
  const CurrentDevice device = current_device();
  int checked = 0;
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    const KernelDescription& description = entry->description;
    if (description.launches.size() < 2 ||
        description.launches[1].head_groups != HeadGroups::fill_slots) {
      continue;
    }
    for (const Grouping grouping : {Grouping{16, 16}, Grouping{16, 8}}) {
      if (grouping.kv_heads != grouping.heads && !description.shapes.kv_heads) continue;
      AttentionShape shape = grouped_shape(DType::fp16, 1100, 64, true, grouping);
      shape.batch = grouping.kv_heads == grouping.heads ? 3 : 4;
      const KernelConfig config = description.config_for(64, device.cc);
      const std::int64_t kv_blocks = (shape.seq_len + config.tile.bc - 1) / config.tile.bc;
      const std::int64_t kv_heads = std::int64_t{shape.batch} * shape.key_heads();
      const std::int64_t group = kv_heads_per_group(
          description.launches[1], problem_of(shape), device.l2_bytes, l2_partitions_for(device.cc),
          kv_blocks, std::int64_t{device.sm_count} * config.ctas_per_sm);
      INFO(description.name << ", " << describe(shape) << ", " << group << " K/V heads a group");
      REQUIRE(group > 0);
      CHECK(kv_heads / group > 1);
      check_shape(*entry->backward(), shape, seed + 11, stream);
      ++checked;
    }
  }
  CHECK(checked > 0);  // fa2_bwd runs wherever a backward kernel with groups does
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

// The registered entry of `kernel` when this device runs it; null (and a
// WARN) otherwise.
const KernelEntry* runnable(const KernelDescription& kernel) {
  for (const KernelEntry* entry : runnable_kernels(Direction::backward)) {
    if (entry->description.name == kernel.name) return entry;
  }
  return nullptr;
}

// fa2_bwd's pre-pass (fa2_bwd_2d's and fa3_bwd's too) zeroes its dQ
// accumulator: a workspace full of NaN, and the same workspace again, give
// the reference's gradients both times.
TEST_CASE("fa2_bwd, fa2_bwd_2d and fa3_bwd take a workspace of any contents, twice", "[backward]") {
  for (const KernelDescription* description :
       {&fa2_backward_kernel, &fa2_backward_2d_kernel, &fa3_backward_kernel}) {
    const KernelEntry* entry = runnable(*description);
    if (entry == nullptr) continue;
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
      INFO(description->name << ", run " << run);
      BackwardOutputs out(shape);
      const BackwardBuffers io{inputs.q.data(), inputs.k.data(),   inputs.v.data(),
                               o.data(),        inputs.d_o.data(), forward.lse.as<float>(),
                               out.d_q.data(),  out.d_k.data(),    out.d_v.data()};
      const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
      REQUIRE(kernel.launch(shape, io, context) == cudaSuccess);
      check_outputs(shape, reference, out, stream);
    }
  }
}

// A kernel at the config sm_86 gets, through `launch_for_arch`, against the
// reference backward at d = 128 on the test lengths, both masks and dtypes;
// its GQA instantiation too, on two of the lengths, where it takes GQA. Every
// config is compiled for every architecture the kernel is built for, so this
// device runs it too.
template <auto launch_for_arch>
void check_sm86_config(const KernelEntry& entry) {
  const KernelDescription& description = entry.description;
  const BackwardKernel sm86{
      entry.backward()->workspace_bytes,
      [](const AttentionShape& shape, const BackwardBuffers& io, const LaunchContext& context) {
        return launch_for_arch({8, 6}, shape, io, context);
      }};
  measure::CudaStream stream;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (int seq_len : test_seq_lens) {
      for (bool causal : {false, true}) {
        const AttentionShape shape = make_shape(dtype, seq_len, 128, causal);
        INFO(description.name << " at sm_86, " << describe(shape));
        check_shape(sm86, shape, seed + static_cast<std::uint64_t>(seq_len), stream);
        if (!description.shapes.kv_heads || (seq_len != 17 && seq_len != 1000)) continue;
        for (const Grouping grouping : groupings) {
          const AttentionShape grouped = grouped_shape(dtype, seq_len, 128, causal, grouping);
          INFO(description.name << " at sm_86, " << describe(grouped));
          check_shape(sm86, grouped, seed + 3 + static_cast<std::uint64_t>(seq_len), stream);
        }
      }
    }
  }
}

// fa2_bwd's d = 128 tile on sm_86 and sm_89: Br 32 over Bc 64, 4 warps, 69 KB
// of shared memory.
TEST_CASE("fa2_bwd at sm_86's config matches the reference backward", "[backward]") {
  const KernelEntry* entry = runnable(fa2_backward_kernel);
  if (entry == nullptr) return;
  CHECK(fa2_backward_kernel.tile_for(128, {8, 6}) == TileShape{32, 64});
  check_sm86_config<launch_fa2_backward_for_arch>(*entry);
}

// fa2_bwd_2d's d = 128 tile on sm_86 and sm_89: Br 32 over Bc 64, 4 warps
// (warp splits 1, 2, 1), 74,240 B of shared memory; a tile no variant of
// tests/gpu/fa2bwd_variants.cu ran.
TEST_CASE("fa2_bwd_2d at sm_86's config matches the reference backward", "[backward]") {
  const KernelEntry* entry = runnable(fa2_backward_2d_kernel);
  if (entry == nullptr) return;
  CHECK(fa2_backward_2d_kernel.config_for(128, {8, 6}) ==
        KernelConfig{.tile = {32, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1});
  check_sm86_config<launch_fa2_backward_2d_for_arch>(*entry);
}

}  // namespace
}  // namespace cfr::kernels::testing
