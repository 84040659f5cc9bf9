// The runtime registry (kernels/kernel_registry.hpp), no GPU needed: the
// built-in entries are the catalog's, each with a launcher of its direction
// and the architectures this build compiled it for; a device it has no code
// for is named; add() copies what it is given and refuses a duplicate name, a
// launcher of the other direction and a backward kernel without its forward.

#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "kernels/kernel_registry.hpp"

namespace cfr::kernels {
namespace {

std::size_t no_workspace(const AttentionShape&) {
  return 0;
}
cudaError_t no_forward(const AttentionShape&, const ForwardBuffers&, const LaunchContext&) {
  return cudaErrorNotSupported;
}
cudaError_t no_backward(const AttentionShape&, const BackwardBuffers&, const LaunchContext&) {
  return cudaErrorNotSupported;
}
const ForwardKernel forward_stub{no_workspace, no_forward};
const BackwardKernel backward_stub{no_workspace, no_backward};

std::string refusal(KernelRegistry& registry, const KernelDescription& description,
                    KernelLauncher launcher) {
  try {
    registry.add(description, launcher, {}, "test");
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "added";
}

TEST_CASE("the built-in registry holds the catalog's kernels with their launchers", "[registry]") {
  const KernelRegistry built_in = KernelRegistry::with_builtin_kernels();
  REQUIRE(built_in.entries().size() == kernel_catalog.size());
  for (const KernelDescription& description : kernel_catalog) {
    INFO(description.name);
    const KernelEntry* entry = built_in.find(description.name);
    REQUIRE(entry != nullptr);
    CHECK(entry->description.name.data() != description.name.data());  // its own copy
    CHECK(entry->description.head_dims.size() == description.head_dims.size());
    CHECK(entry->description.traffic == description.traffic);
    // The shapes it takes (fa2_bwd: GQA), which the sweep plans rows by.
    const ShapeSupport& shapes = entry->description.shapes;
    CHECK(shapes.kv_len == description.shapes.kv_len);
    CHECK(shapes.kv_heads == description.shapes.kv_heads);
    CHECK(shapes.paged == description.shapes.paged);
    CHECK(shapes.max_q_len == description.shapes.max_q_len);
    // Every field of every launch: the grids a causal row takes (fa2_bwd's
    // causal_grid and head groups, fa3_wgmma's heaviest-first groups).
    REQUIRE(entry->description.launches.size() == description.launches.size());
    for (std::size_t i = 0; i < description.launches.size(); ++i) {
      const GridLaunch& copy = entry->description.launches[i];
      const GridLaunch& original = description.launches[i];
      CHECK(copy.pass == original.pass);
      CHECK(copy.pass.data() != original.pass.data());
      CHECK(copy.order == original.order);
      CHECK(copy.causal_order == original.causal_order);
      CHECK(copy.head_groups == original.head_groups);
      CHECK(copy.causal_grid == original.causal_grid);
    }
    CHECK((entry->forward() != nullptr) == (description.direction == Direction::forward));
    CHECK((entry->backward() != nullptr) == (description.direction == Direction::backward));
    CHECK(entry->origin == "built in");
    CHECK_FALSE(entry->compiled_archs.empty());
    for (const CudaArch& arch : entry->compiled_archs) {
      CHECK(arch.cc >= description.min_compute_capability);  // kernels/meson.build's filter
    }
  }
  CHECK(built_in.find("no_such_kernel") == nullptr);
  // wgmma needs sm_90a: kernels/meson.build's arch_specific builds fa3_wgmma
  // only for targets ending in 'a' (sm_90a alone where gpu_archs names none).
  const KernelEntry* fa3 = built_in.find("fa3_wgmma");
  REQUIRE(fa3 != nullptr);
  for (const CudaArch& arch : fa3->compiled_archs) CHECK(arch.suffix == 'a');
  CHECK(find_forward_kernel(fa1_backward_kernel.name) == nullptr);  // a backward kernel
  CHECK(find_backward_kernel(fa1_backward_kernel.name) != nullptr);
}

TEST_CASE("a backward kernel's forward partner is found in the registry", "[registry]") {
  const KernelEntry* backward = registry().find(fa1_backward_kernel.name);
  REQUIRE(backward != nullptr);
  const KernelEntry* partner = registry().forward_partner(*backward);
  REQUIRE(partner != nullptr);
  CHECK(partner->description.name == "fa1_scalar");
  CHECK(partner->forward() != nullptr);
  CHECK(registry().forward_partner(*partner) == nullptr);  // a forward kernel has none
}

TEST_CASE("a device the kernel has no code for, or that is too old, is named", "[registry]") {
  KernelRegistry registry;
  const KernelEntry& entry = registry.add(
      fa1_wmma_kernel, forward_stub, {*parse_cuda_arch("80"), *parse_cuda_arch("90a")}, "test");
  CHECK_FALSE(entry.cannot_run_on({8, 0}));
  CHECK_FALSE(entry.cannot_run_on({8, 9}));  // sm_80 code runs on 8.9
  CHECK_FALSE(entry.cannot_run_on({9, 0}));
  CHECK(entry.cannot_run_on({7, 5}) ==
        "fa1_wmma needs compute capability 8.0 or newer; this GPU has 7.5");
  CHECK(entry.cannot_run_on({10, 0}) ==
        "fa1_wmma is not compiled for compute capability 10.0 (this build has it for sm_80, "
        "sm_90a; add the GPU's architecture to -Dgpu_archs)");

  const KernelEntry& unknown = registry.add(fa1_scalar_kernel, forward_stub, {}, "test");
  CHECK_FALSE(unknown.cannot_run_on({12, 0}));  // no architectures known: only a launch can tell
}

TEST_CASE("add copies the description into storage the registry owns", "[registry]") {
  KernelRegistry registry;
  std::string name = "plugin_fa";
  std::string summary = "a kernel from elsewhere";
  std::array<int, 2> head_dims{64, 128};
  std::array<ConfigRule, 1> configs{{{.max_head_dim = 128, .config = {{128, 64}}}}};
  std::string pass = "forward";
  std::array<GridLaunch, 1> launches{
      {{pass, {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}}}};
  KernelDescription description = fa1_wmma_kernel;
  description.name = name;
  description.summary = summary;
  description.head_dims = head_dims;
  description.configs = configs;
  description.launches = launches;
  const KernelEntry& entry = registry.add(description, forward_stub, {}, "libplugin.so");

  name.assign("overwritten");
  summary.assign("overwritten");
  pass.assign("overwritten");
  head_dims = {1, 2};
  configs[0].config.tile = {1, 1};
  CHECK(entry.description.name == "plugin_fa");
  CHECK(entry.description.summary == "a kernel from elsewhere");
  CHECK(entry.description.launches[0].pass == "forward");
  CHECK(entry.description.head_dims[1] == 128);
  CHECK(entry.description.tile_for(64, {9, 0}) == TileShape{128, 64});
  CHECK(registry.find("plugin_fa") == &entry);

  // Later additions leave earlier entries where they are.
  for (int i = 0; i < 32; ++i) {
    KernelDescription more = fa1_scalar_kernel;
    const std::string more_name = "more_" + std::to_string(i);
    more.name = more_name;
    registry.add(more, forward_stub, {}, "test");
  }
  CHECK(registry.find("plugin_fa") == &entry);
  CHECK(entry.description.name == "plugin_fa");
}

TEST_CASE("add refuses a duplicate name, the wrong launcher, a missing partner", "[registry]") {
  KernelRegistry registry = KernelRegistry::with_builtin_kernels();
  CHECK(refusal(registry, fa1_wmma_kernel, forward_stub) ==
        "kernel 'fa1_wmma': the name is taken (built in)");
  KernelDescription renamed = fa1_wmma_kernel;
  renamed.name = "fa1_wmma_copy";
  CHECK(refusal(registry, renamed, backward_stub) ==
        "kernel 'fa1_wmma_copy': a forward kernel with a backward launcher");
  CHECK(refusal(registry, renamed, ForwardKernel{no_workspace, nullptr}) ==
        "kernel 'fa1_wmma_copy': its launcher lacks a function");
  KernelDescription nameless = renamed;
  nameless.name = "";
  CHECK(refusal(registry, nameless, forward_stub) == "kernel '': has no name");

  KernelDescription backward = fa1_backward_kernel;
  backward.name = "fa1_bwd_copy";
  backward.forward_partner = "fa3_mma";
  CHECK(refusal(registry, backward, backward_stub) ==
        "kernel 'fa1_bwd_copy': its forward partner is not a known kernel ('fa3_mma')");
  backward.forward_partner = "fa1_wmma";  // has no fp32, which fa1_bwd's description has
  CHECK(refusal(registry, backward, backward_stub) ==
        "kernel 'fa1_bwd_copy': its forward partner lacks one of its dtypes ('fa1_wmma')");
  backward.forward_partner = "fa1_scalar";
  CHECK(refusal(registry, backward, backward_stub) == "added");
  // A GQA backward (fa2_bwd's shapes) needs a forward that makes GQA's O and LSE.
  KernelDescription gqa_backward = fa2_backward_kernel;
  gqa_backward.name = "fa2_bwd_copy";
  gqa_backward.earlier_revisions = {};  // fa2_bwd's are descriptions of fa2_bwd
  gqa_backward.forward_partner = "fa1_wmma";
  CHECK(refusal(registry, gqa_backward, backward_stub) ==
        "kernel 'fa2_bwd_copy': its forward partner does not take every shape it takes "
        "('fa1_wmma')");
  gqa_backward.forward_partner = "fa2_mma";
  CHECK(refusal(registry, gqa_backward, backward_stub) == "added");
  CHECK(registry.find("fa2_bwd_copy")->description.shapes.kv_heads);
  CHECK(registry.forward_partner(*registry.find("fa1_bwd_copy"))->description.name == "fa1_scalar");
}

TEST_CASE("the build's architecture lists parse", "[registry]") {
  const std::vector<CudaArch> archs = parse_arch_list("80,86,90a");
  REQUIRE(archs.size() == 3);
  CHECK(archs[1].cc == ComputeCapability{8, 6});
  CHECK(archs[2].suffix == 'a');
  CHECK(parse_arch_list("").empty());
  CHECK_THROWS_WITH(parse_arch_list("80,,90"), "'' is not a CUDA architecture");
}

}  // namespace
}  // namespace cfr::kernels
