// Every registered forward kernel against the fp32 reference on the test
// grid of attention_case.hpp (N in {1, 17, 64, 1000, 4097}, the head dims of
// the grid the kernel declares, causal and not, every dtype it declares), with
// outputs poisoned before the launch; tolerances from tolerance_for(dtype).
// One section per kernel: `-c fa1_wmma` runs one.

#include <catch2/catch.hpp>

#include "attention_case.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa2_mma_for_arch.hpp"
#include "kernels/fa3_wgmma_rows.hpp"
#include "kernels/kernel_launcher.hpp"
#include "kernels/kernel_registry.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/kv_splits.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20260301;

// Launches `kernel` on poisoned outputs and checks O and L.
void check_forward(const std::string& name, const ForwardKernel& kernel,
                   const AttentionShape& shape, const Inputs& inputs,
                   const ForwardReference& reference, cudaStream_t stream, cublasHandle_t cublas) {
  INFO(name << ", " << describe(shape));
  DeviceBuffer o(tensor_bytes(shape));
  DeviceBuffer lse(row_count(shape) * sizeof(float));
  DeviceBuffer workspace = measure::zeroed_workspace(kernel.workspace_bytes(shape), stream);
  CFR_CUDA_CHECK(poison(o.data(), o.bytes(), stream));
  CFR_CUDA_CHECK(poison(lse.data(), lse.bytes(), stream));
  const ForwardBuffers io = inputs.forward(o.data(), lse.as<float>());
  const LaunchContext context{stream, cublas, workspace.data(), workspace.bytes()};
  REQUIRE(kernel.launch(shape, io, context) == cudaSuccess);
  check_against_reference("O", o.data(), shape.dtype, reference.o.as<float>(),
                          tensor_elements(shape), shape.dtype, stream);
  check_against_reference("L", lse.data(), DType::fp32, reference.lse.as<float>(), row_count(shape),
                          shape.dtype, stream);
}

void check_forward(const KernelEntry& entry, const AttentionShape& shape, const Inputs& inputs,
                   const ForwardReference& reference, cudaStream_t stream, cublasHandle_t cublas) {
  check_forward(std::string(entry.description.name), *entry.forward(), shape, inputs, reference,
                stream, cublas);
}

void check_on_test_grid(const KernelEntry& entry) {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (DType dtype : test_dtypes) {
    if (!entry.description.dtypes.contains(dtype)) continue;
    for (int head_dim : test_head_dims) {
      if (!entry.description.supports_head_dim(head_dim)) continue;
      for (int seq_len : test_seq_lens) {
        for (bool causal : {false, true}) {
          const AttentionShape shape = make_shape(dtype, seq_len, head_dim, causal);
          if (!takes(entry, shape)) continue;
          const Inputs inputs(shape, seed + static_cast<std::uint64_t>(seq_len), stream);
          const ForwardReference reference(shape, inputs, stream);
          check_forward(entry, shape, inputs, reference, stream, cublas);
        }
      }
    }
  }
}

TEST_CASE("every forward kernel matches the fp32 reference on the test grid", "[forward]") {
  for (const KernelEntry* entry : runnable_kernels(Direction::forward)) {
    DYNAMIC_SECTION(entry->description.name) {
      check_on_test_grid(*entry);
    }
  }
}

// softmax_scale != 0 replaces 1/sqrt(d); 0.5 at d = 64 (or the kernel's
// smallest head dim) makes the scores 4x sharper than the default, so a
// kernel that ignored it would be far off.
TEST_CASE("every forward kernel applies an explicit softmax_scale", "[forward]") {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (const KernelEntry* entry : runnable_kernels(Direction::forward)) {
    const KernelDescription& description = entry->description;
    const DType dtype = description.dtypes.fp16 ? DType::fp16 : DType::fp32;
    const int head_dim = description.supports_head_dim(64) ? 64 : description.head_dims.front();
    for (bool causal : {false, true}) {
      // 200 query tokens, or 9 for a kernel built for few (fa2_decode).
      const int q_len = description.shapes.max_q_len > 0 ? 9 : 200;
      AttentionShape shape = make_shape(dtype, q_len, head_dim, causal);
      shape.softmax_scale = 0.5f;
      const Inputs inputs(shape, seed + 7, stream);
      const ForwardReference reference(shape, inputs, stream);
      check_forward(*entry, shape, inputs, reference, stream, cublas);
    }
  }
}

// fa2_mma's sm_86/sm_89 config (Br 128 at d = 128, what 99 KB of shared
// memory holds) on this device: the test grid at d = 128 and a served shape,
// so the tile an RTX card runs is checked where the tests run.
TEST_CASE("fa2_mma's sm_86 tile matches the reference on the test grid", "[forward][arch]") {
  const KernelEntry* entry = registry().find("fa2_mma");
  REQUIRE(entry != nullptr);
  if (entry->cannot_run_on(ComputeCapability{8, 6})) return;
  const ForwardKernel sm86{no_workspace, [](const AttentionShape& shape, const ForwardBuffers& io,
                                            const LaunchContext& context) {
                             return launch_fa2_mma_for_arch({8, 6}, shape, io, context);
                           }};
  CHECK(fa2_mma_kernel.tile_for(128, {8, 6}) == TileShape{128, 64});
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (int seq_len : test_seq_lens) {
      for (bool causal : {false, true}) {
        AttentionShape shape = make_shape(dtype, seq_len, 128, causal);
        const Inputs inputs(shape, seed + static_cast<std::uint64_t>(seq_len), stream);
        const ForwardReference reference(shape, inputs, stream);
        check_forward("fa2_mma at sm_86", sm86, shape, inputs, reference, stream, cublas);
      }
    }
    AttentionShape gqa = make_shape(dtype, 300, 128, true);
    gqa.heads = 8;
    gqa.kv_heads = 2;
    gqa.kv_len = 1000;
    const Inputs inputs(gqa, seed + 5, stream);
    const ForwardReference reference(gqa, inputs, stream);
    check_forward("fa2_mma at sm_86", sm86, gqa, inputs, reference, stream, cublas);
  }
}

// fa3_wgmma's 192-row Q blocks (three consumer warpgroups, catalog revision
// 8), which its rule takes only on shapes of many tiles, forced on the test
// grid at d 64 (kernels/fa3_wgmma_rows.hpp), then on B4 H16 N 3000 (a
// partial last Q block of 120 rows and K/V block of 56 keys), where the rule
// takes them on an H100's or H200's 132 SMs, and with GQA over a longer cache.
TEST_CASE("fa3_wgmma's 192-row tile matches the reference", "[forward]") {
  const KernelEntry* entry = registry().find("fa3_wgmma");
  REQUIRE(entry != nullptr);
  const CurrentDevice device = current_device();
  if (entry->cannot_run_on(device.cc)) return;
  const ForwardKernel tall{
      entry->forward()->workspace_bytes,
      [](const AttentionShape& shape, const ForwardBuffers& io, const LaunchContext& context) {
        return launch_fa3_wgmma_with_rows(192, shape, io, context);
      }};
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    for (bool causal : {false, true}) {
      for (int seq_len : test_seq_lens) {
        const AttentionShape shape = make_shape(dtype, seq_len, 64, causal);
        const Inputs inputs(shape, seed + static_cast<std::uint64_t>(seq_len), stream);
        const ForwardReference reference(shape, inputs, stream);
        check_forward("fa3_wgmma on 192 rows", tall, shape, inputs, reference, stream, cublas);
      }
      for (bool gqa : {false, true}) {
        AttentionShape shape = make_shape(dtype, 3000, 64, causal);
        shape.batch = 4;
        shape.heads = 16;
        if (gqa) {
          shape.kv_heads = 4;
          shape.kv_len = 3500;
        }
        if (device.sm_count == 132) {
          CHECK(fa3_wgmma_kernel
                    .problem_tile(problem_of(shape), fa3_wgmma_kernel.tile_for(64, {9, 0}),
                                  device.sm_count)
                    .br == 192);
        }
        const Inputs inputs(shape, seed + 192, stream);
        const ForwardReference reference(shape, inputs, stream);
        check_forward(*entry, shape, inputs, reference, stream, cublas);
        check_forward("fa3_wgmma on 192 rows", tall, shape, inputs, reference, stream, cublas);
      }
    }
  }
  // 192 rows is a d 64 tile only.
  const AttentionShape d128 = make_shape(DType::fp16, 64, 128, false);
  const Inputs inputs(d128, seed, stream);
  DeviceBuffer o(tensor_bytes(d128));
  DeviceBuffer lse(row_count(d128) * sizeof(float));
  DeviceBuffer workspace = measure::zeroed_workspace(tall.workspace_bytes(d128), stream);
  const LaunchContext context{stream, cublas, workspace.data(), workspace.bytes()};
  CHECK(launch_fa3_wgmma_with_rows(192, d128, inputs.forward(o.data(), lse.as<float>()), context) ==
        cudaErrorInvalidValue);
}

// The shapes attention is served in (issue 25), for every kernel that takes
// them: fewer K/V heads than query heads, K/V of another length than Q (the
// causal mask bottom-right aligned), paged caches of 16 and 256 tokens with
// their pages shuffled, odd lengths; one key, and more queries than keys
// without a mask.
struct Served {
  int batch, heads, kv_heads, q_len, kv_len;
};
const std::vector<Served> served_shapes{
    {2, 8, 2, 1, 1},      {2, 8, 2, 1, 17},    {1, 8, 1, 3, 1000},
    {2, 4, 4, 16, 4097},  {1, 16, 2, 5, 3000}, {1, 8, 2, 100, 100},
    {1, 6, 2, 257, 1000}, {2, 4, 2, 64, 64},   {1, 8, 8, 200, 130},
};

TEST_CASE("every forward kernel that takes served shapes matches the reference on them",
          "[forward][served]") {
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  for (const KernelEntry* entry : runnable_kernels(Direction::forward)) {
    const ShapeSupport& can = entry->description.shapes;
    if (!can.kv_len && !can.kv_heads && !can.paged) continue;
    DYNAMIC_SECTION(entry->description.name) {
      int checked = 0;
      for (DType dtype : {DType::fp16, DType::bf16}) {
        if (!entry->description.dtypes.contains(dtype)) continue;
        for (int head_dim : {64, 128}) {
          if (!entry->description.supports_head_dim(head_dim)) continue;
          for (const Served& s : served_shapes) {
            for (bool causal : {false, true}) {
              for (int page_size : {0, 16, 256}) {
                AttentionShape shape = make_shape(dtype, s.q_len, head_dim, causal);
                shape.batch = s.batch;
                shape.heads = s.heads;
                shape.kv_heads = s.kv_heads;
                shape.kv_len = s.kv_len;
                shape.page_size = page_size;
                if (causal && s.q_len > s.kv_len) continue;
                if (!takes(*entry, shape)) continue;
                const Inputs inputs(shape, seed + static_cast<std::uint64_t>(s.kv_len + page_size),
                                    stream);
                const ForwardReference reference(shape, inputs, stream);
                check_forward(*entry, shape, inputs, reference, stream, cublas);
                ++checked;
              }
            }
          }
        }
      }
      CHECK(checked > 0);
    }
  }
}

// fa2_decode keeps a split's page indices in shared memory when they fit
// the config's table (KernelConfig::page_table_entries) and reads the table
// in global memory when they do not: 136 K/V heads (B 17 x 8) leave one
// split even at two CTAs per SM on 132 SMs, and 33000 keys are 2063 pages of
// 16, past the 2048 entries of sm_90's d = 128 config. Both tiles: one query
// of 8 heads a K/V head (16 rows a CTA), and 16 causal queries of 4 (64 rows).
TEST_CASE(
    "fa2_decode reads a paged split's table from global memory when it outgrows the shared one",
    "[forward][served]") {
  const KernelEntry* decode = nullptr;
  for (const KernelEntry* entry : runnable_kernels(Direction::forward)) {
    if (entry->description.name == fa2_decode_kernel.name) decode = entry;
  }
  if (decode == nullptr) return;
  measure::CudaStream stream;
  measure::CublasHandle cublas;
  struct Queries {
    int heads, q_len;
    bool causal;
  };
  for (const Queries& queries :
       {Queries{8, 1, false}, Queries{8, 1, true}, Queries{32, 16, true}}) {
    AttentionShape shape = make_shape(DType::fp16, queries.q_len, 128, queries.causal);
    shape.batch = 17;
    shape.heads = queries.heads;
    shape.kv_heads = 8;
    shape.kv_len = 33000;
    shape.page_size = 16;
    const AttentionProblem problem = problem_of(shape);
    const CurrentDevice device = current_device();
    const KernelConfig config = fa2_decode_kernel.config_for(128, device.cc);
    const TileShape tile = fa2_decode_tile(problem, config.tile);
    const KvSplitPlan plan =
        plan_kv_splits(problem, tile, device.sm_count, config.page_table_entries);
    const std::int64_t split_pages =
        (plan.key_tiles + plan.splits - 1) / plan.splits * tile.bc / shape.page_size;
    INFO("tile " << tile.br << "x" << tile.bc << ", " << plan.splits << " splits of " << split_pages
                 << " pages");
    if (split_pages <= config.page_table_entries) {
      WARN("a split's " << split_pages << " pages fit the shared table on this device");
    }
    const Inputs inputs(shape, seed + 33000 + static_cast<std::uint64_t>(queries.q_len), stream);
    const ForwardReference reference(shape, inputs, stream);
    check_forward(*decode, shape, inputs, reference, stream, cublas);
  }
}

}  // namespace
}  // namespace cfr::kernels::testing
