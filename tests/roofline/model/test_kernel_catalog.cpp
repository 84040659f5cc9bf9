// The catalog's rules and lookups (roofline/model/kernel_description.hpp): every
// built-in entry keeps the rules, each kernel has its own head dims, a config
// is chosen per head dim and per architecture, and each rule is enforced.
// Expected values are the entries of roofline/model/kernel_catalog.hpp.

#include <catch2/catch.hpp>

#include <array>
#include <string>

#include <fmt/format.h>

#include "roofline/model/kernel_catalog.hpp"
#include "tests/roofline/ncu_fixtures.hpp"  // read_text

using namespace cfr;

namespace {

// A kernel that exists only here: head dims 64, 128 and 256, a larger tile
// on sm_90 for d <= 128, and the general tile elsewhere.
constexpr std::array<int, 3> test_head_dims{64, 128, 256};
constexpr std::array<ConfigRule, 3> test_configs{{
    {.max_head_dim = 128,
     .min_cc = {9, 0},
     .config = {.tile = {128, 128}, .warps = 8, .stages = 3, .ctas_per_sm = 1}},
    {.max_head_dim = 128, .config = {.tile = {128, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 2}},
    {.max_head_dim = 256, .config = {.tile = {64, 32}, .warps = 4, .stages = 2, .ctas_per_sm = 1}},
}};
constexpr std::array<GridLaunch, 1> test_launches{{
    {"forward", {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch}},
}};
constexpr KernelDescription test_kernel{
    .name = "test_mma",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true},
    .head_dims = test_head_dims,
    .min_compute_capability = {8, 0},
    .configs = test_configs,
    .launches = test_launches,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "a kernel of this test",
};
static_assert(!description_error(test_kernel));

std::string problem_of(const KernelDescription& kernel) {
  return std::string(description_error(kernel).problem);
}

}  // namespace

TEST_CASE("the built-in catalog keeps every rule") {
  const DescriptionError error = catalog_error(kernel_catalog);
  INFO(error.kernel << ": " << error.problem);
  CHECK_FALSE(error);
}

TEST_CASE("each kernel has its own head dims") {
  CHECK(std::vector<int>(fa1_wmma_kernel.head_dims.begin(), fa1_wmma_kernel.head_dims.end()) ==
        std::vector<int>{32, 64, 128});
  CHECK(test_kernel.supports_head_dim(256));
  CHECK_FALSE(test_kernel.supports_head_dim(32));
  for (const KernelDescription& kernel : kernel_catalog) {
    INFO(kernel.name);
    CHECK_FALSE(kernel.supports_head_dim(256));  // test_kernel's 256 is its own
  }
}

TEST_CASE("a config is chosen per head dim and per architecture") {
  // The catalog's tiles, warps and CTAs per SM (kernel_catalog.hpp).
  CHECK(fa1_wmma_kernel.config_for(32, {8, 0}) ==
        KernelConfig{.tile = {64, 32}, .warps = 4, .stages = 2, .ctas_per_sm = 4});
  CHECK(fa1_wmma_kernel.config_for(64, {9, 0}).ctas_per_sm == 3);
  CHECK(fa1_wmma_kernel.tile_for(128, {9, 0}) == TileShape{32, 32});
  CHECK(fa1_scalar_kernel.config_for(64, {8, 0}).threads() == 256);
  CHECK_FALSE(naive_kernel.tile_for(64, {9, 0}).tiled());  // cuBLAS picks its own

  CHECK(test_kernel.tile_for(64, {9, 0}) == TileShape{128, 128});
  CHECK(test_kernel.tile_for(64, {8, 6}) == TileShape{128, 64});
  CHECK(test_kernel.tile_for(128, {10, 0}) == TileShape{128, 128});
  CHECK(test_kernel.tile_for(256, {9, 0}) == TileShape{64, 32});  // no sm_90 rule for 256
  CHECK_FALSE(test_kernel.config_independent_of_arch(128));
  CHECK(test_kernel.config_independent_of_arch(256));
  CHECK(tiles_on_any_arch(test_kernel, 64) == std::vector<TileShape>{{128, 64}, {128, 128}});
  // Only where sm_86 and sm_89 (99 KB of shared memory a block) cannot hold
  // the config of sm_80 and sm_90: fa2_mma's 128 KB at d = 128, fa2_decode's
  // three stages.
  CHECK(fa2_mma_kernel.tile_for(128, {8, 0}) == TileShape{256, 64});
  CHECK(fa2_mma_kernel.tile_for(128, {8, 6}) == TileShape{128, 64});
  CHECK(fa2_mma_kernel.tile_for(128, {8, 9}) == TileShape{128, 64});
  CHECK(fa2_mma_kernel.tile_for(128, {9, 0}) == TileShape{256, 64});
  CHECK(fa2_decode_kernel.config_for(128, {8, 0}).stages == 3);
  CHECK(fa2_decode_kernel.config_for(128, {8, 9}).stages == 2);
  CHECK(fa2_decode_kernel.config_for(64, {8, 6}).stages == 2);
  CHECK(fa2_decode_kernel.config_for(64, {9, 0}).stages == 3);
  // fa2_bwd's 145 KB at d = 128 (Br 64 x Bc 128) against 69 KB (32 x 64).
  CHECK(fa2_backward_kernel.tile_for(128, {8, 0}) == TileShape{64, 128});
  CHECK(fa2_backward_kernel.config_for(128, {8, 6}) ==
        KernelConfig{.tile = {32, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1});
  CHECK(fa2_backward_kernel.tile_for(128, {8, 9}) == TileShape{32, 64});
  CHECK(fa2_backward_kernel.tile_for(128, {9, 0}) == TileShape{64, 128});
  // fa3_wgmma: 3 warpgroups, one CTA an SM, 128 x 128 at both head dims.
  CHECK(fa3_wgmma_kernel.config_for(64, {9, 0}) ==
        KernelConfig{.tile = {128, 128}, .warps = 12, .stages = 2, .ctas_per_sm = 1});
  CHECK(fa3_wgmma_kernel.config_for(128, {9, 0}) == fa3_wgmma_kernel.config_for(64, {9, 0}));
  // fa2_bwd_2d's 161 KB at d = 128 (Br 64 x Bc 128) against 72.5 KB (32 x 64);
  // its d = 64 tile (97 KB) fits sm_86's 99 KB.
  constexpr KernelConfig wide{.tile = {64, 128}, .warps = 8, .stages = 2, .ctas_per_sm = 1};
  CHECK(fa2_backward_2d_kernel.config_for(64, {8, 6}) == wide);
  CHECK(fa2_backward_2d_kernel.config_for(64, {9, 0}) == wide);
  CHECK(fa2_backward_2d_kernel.config_for(128, {8, 0}) == wide);
  CHECK(fa2_backward_2d_kernel.config_for(128, {8, 6}) ==
        KernelConfig{.tile = {32, 64}, .warps = 4, .stages = 2, .ctas_per_sm = 1});
  CHECK(fa2_backward_2d_kernel.tile_for(128, {8, 9}) == TileShape{32, 64});
  CHECK(fa2_backward_2d_kernel.config_for(128, {9, 0}) == wide);
  for (const KernelDescription& kernel : kernel_catalog) {
    for (int head_dim : kernel.head_dims) {
      INFO(kernel.name << " d=" << head_dim);
      const bool varies =
          ((kernel.name == "fa2_mma" || kernel.name == "fa2_bwd" || kernel.name == "fa2_bwd_2d") &&
           head_dim == 128) ||
          kernel.name == "fa2_decode";
      CHECK(kernel.config_independent_of_arch(head_dim) == !varies);
    }
  }
}

TEST_CASE("the minimum compute capability decides where a kernel runs") {
  CHECK(fa1_wmma_kernel.min_compute_capability == ComputeCapability{8, 0});
  CHECK_FALSE(fa1_wmma_kernel.runs_on({7, 5}));
  CHECK(fa1_wmma_kernel.runs_on({12, 0}));
  CHECK(below_minimum_reason(fa1_wmma_kernel, {7, 5}) ==
        "fa1_wmma needs compute capability 8.0 or newer; this GPU has 7.5");
  CHECK_FALSE(below_minimum_reason(fa1_scalar_kernel, {7, 5}));
  CHECK(below_minimum_reason(fa3_wgmma_kernel, {8, 9}) ==
        "fa3_wgmma needs compute capability 9.0 or newer; this GPU has 8.9");
  CHECK(fa3_wgmma_kernel.instruction == Instruction::wgmma);
}

TEST_CASE("a backward kernel names the forward kernel that produces its O and LSE") {
  REQUIRE(fa1_backward_kernel.forward_partner == "fa1_scalar");
  const KernelDescription* partner = find_kernel(fa1_backward_kernel.forward_partner);
  REQUIRE(partner != nullptr);  // wherever the catalog lists it
  CHECK(partner->name == "fa1_scalar");
  CHECK(partner_problem(fa1_backward_kernel, partner).empty());
  // fa1_wmma lacks fp32, which fa1_bwd has: it could not feed it.
  CHECK(partner_problem(fa1_backward_kernel, &fa1_wmma_kernel) ==
        "its forward partner lacks one of its dtypes");
  CHECK(partner_problem(fa1_backward_kernel, nullptr) ==
        "its forward partner is not a known kernel");
  for (const KernelDescription& kernel : kernel_catalog) {
    INFO(kernel.name);
    CHECK(kernel.forward_partner.empty() == (kernel.direction == Direction::forward));
  }
}

// fa2_bwd_2d is fa2_bwd's launches with another main kernel: the same three
// launches and byte model, so the models describe it with its own tiles; it
// takes square self-attention only, and a GQA row is skipped naming the shape.
TEST_CASE("fa2_bwd_2d: fa2_bwd's launches and model, its own head dims, no GQA") {
  CHECK(fa2_backward_2d_kernel.direction == Direction::backward);
  CHECK(fa2_backward_2d_kernel.forward_partner == "fa2_mma");
  CHECK(fa2_backward_2d_kernel.traffic == TrafficModelKind::fa2_backward);
  CHECK(fa2_backward_2d_kernel.instruction == Instruction::mma_sync);
  CHECK(fa2_backward_2d_kernel.min_compute_capability == ComputeCapability{8, 0});
  REQUIRE(fa2_backward_2d_kernel.launches.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(fa2_backward_2d_kernel.launches[i].pass == fa2_backward_kernel.launches[i].pass);
    CHECK(fa2_backward_2d_kernel.launches[i].order == fa2_backward_kernel.launches[i].order);
  }
  CHECK(std::vector<int>(fa2_backward_2d_kernel.head_dims.begin(),
                         fa2_backward_2d_kernel.head_dims.end()) == std::vector<int>{64, 128});
  CHECK_FALSE(fa2_backward_2d_kernel.shapes.kv_heads);
  CHECK_FALSE(fa2_backward_2d_kernel.shapes.kv_len);
  CHECK_FALSE(fa2_backward_2d_kernel.shapes.paged);
  const AttentionProblem gqa{.heads = 32, .seq_len = 4096, .head_dim = 128, .kv_heads = 8};
  CHECK(shape_reason(fa2_backward_2d_kernel, gqa) ==
        "fa2_bwd_2d takes as many K/V heads as query heads (kv_heads 8 != heads 32)");
  CHECK_FALSE(shape_reason(fa2_backward_kernel, gqa));
  CHECK_FALSE(shape_reason(fa2_backward_2d_kernel, {.heads = 32, .seq_len = 4096}));
}

TEST_CASE("launch orders are data: the grid axes, fastest first") {
  REQUIRE(fa1_scalar_kernel.launches.size() == 1);
  CHECK(fa1_scalar_kernel.launches[0].order ==
        GridOrder{GridAxis::q_blocks, GridAxis::heads, GridAxis::batch});
  REQUIRE(fa1_backward_kernel.launches.size() == 2);
  CHECK(fa1_backward_kernel.launches[0].order[0] == GridAxis::kv_blocks);  // dK dV per K/V block
  CHECK(fa1_backward_kernel.launches[1].order[0] == GridAxis::q_blocks);   // dQ per Q block
  CHECK(naive_kernel.launches.empty());
  REQUIRE(fa3_wgmma_kernel.launches.size() == 1);
  CHECK(fa3_wgmma_kernel.launches[0].order ==
        GridOrder{GridAxis::heads, GridAxis::batch, GridAxis::q_blocks});
  CHECK(fa3_wgmma_kernel.launches[0].head_groups == HeadGroups::fit_l2);
}

TEST_CASE("a kernel's earlier revisions: whole descriptions, oldest first, below its own") {
  CHECK(fa3_wgmma_kernel.revision == 8);
  REQUIRE(fa3_wgmma_kernel.earlier_revisions.size() == 4);
  CHECK(fa3_wgmma_kernel.unrecorded_revision() == 4);
  CHECK(fa3_wgmma_kernel.at_revision(8) == &fa3_wgmma_kernel);
  CHECK(fa3_wgmma_kernel.at_revision(7) == &fa3_wgmma_v7_kernel);
  CHECK(fa3_wgmma_kernel.at_revision(6) == &fa3_wgmma_v6_kernel);
  CHECK(fa3_wgmma_kernel.at_revision(5) == &fa3_wgmma_v5_kernel);
  CHECK(fa3_wgmma_kernel.at_revision(4) == &fa3_wgmma_v4_kernel);
  CHECK(fa3_wgmma_kernel.at_revision(3) == nullptr);
  // Revision 5 had today's launch order and 128-key blocks at every mask; 6 and 7
  // differ in their blocks without a mask only, 8 in its Q blocks at d 64.
  CHECK(fa3_wgmma_v5_kernel.launches.data() == fa3_wgmma_kernel.launches.data());
  CHECK(fa3_wgmma_v5_kernel.problem_tile == nullptr);
  CHECK(fa3_wgmma_v6_kernel.problem_tile == fa3_wgmma_v6_tile);
  CHECK(fa3_wgmma_v7_kernel.problem_tile == fa3_wgmma_tile);
  CHECK(fa3_wgmma_kernel.problem_tile == fa3_wgmma_v8_tile);
  // Revision 4 walked Q blocks fastest, one head after another; the rest is alike.
  CHECK(fa3_wgmma_v4_kernel.launches[0].order ==
        GridOrder{GridAxis::q_blocks, GridAxis::heads, GridAxis::batch});
  CHECK(fa3_wgmma_v4_kernel.launches[0].head_groups == HeadGroups::all);
  CHECK(fa3_wgmma_v4_kernel.configs.data() == fa3_wgmma_kernel.configs.data());
  // A kernel with no earlier revision: its rows record none and ran revision 1.
  CHECK(fa2_mma_kernel.revision == 1);
  CHECK(fa2_mma_kernel.unrecorded_revision() == 1);
  CHECK(fa2_mma_kernel.at_revision(1) == &fa2_mma_kernel);
  CHECK(fa2_mma_kernel.at_revision(2) == nullptr);

  const auto problem_of = [](const KernelDescription& kernel) {
    return std::string(description_error(kernel).problem);
  };
  KernelDescription other = fa3_wgmma_v4_kernel;
  other.name = "fa2_mma";
  const std::array<const KernelDescription*, 1> of_another{&other};
  KernelDescription broken = fa3_wgmma_kernel;
  broken.earlier_revisions = of_another;
  CHECK(problem_of(broken) == "an earlier revision is not a description of the same kernel");
  broken.earlier_revisions = fa3_wgmma_earlier;
  broken.revision = 6;
  CHECK(problem_of(broken) == "earlier revisions are not ascending below its own");
  broken.revision = 0;
  CHECK(problem_of(broken) == "revision is not positive");
  const std::array<const KernelDescription*, 1> nested{&fa3_wgmma_kernel};
  KernelDescription later = fa3_wgmma_kernel;
  later.revision = 9;
  later.earlier_revisions = nested;
  CHECK(problem_of(later) == "an earlier revision lists earlier revisions of its own");
}

TEST_CASE(
    "fa3_wgmma's K/V blocks: 128 keys causal; without a mask 192 at d 64 and 176 at d 128 "
    "where they pad the keys by at most 2 % more") {
  AttentionProblem problem;
  for (const int head_dim : {64, 128}) {
    problem.head_dim = head_dim;
    const int longer = head_dim == 64 ? 192 : 176;
    const TileShape config = fa3_wgmma_kernel.config_for(head_dim, {9, 0}).tile;
    CHECK(config == TileShape{128, 128});
    // N 8192: 43 blocks of 192 hold 8256 keys (+0.8 %), 47 of 176 hold 8272 (+1.0 %).
    // N 5000: 40 blocks of 128 hold 5120 keys, 27 of 192 5184 (+1.25 %), 29 of 176 5104.
    for (const std::int64_t n : {8192, 16384, 5000}) {
      CAPTURE(head_dim, n);
      problem.seq_len = n;
      problem.causal = true;
      CHECK(fa3_wgmma_v7_kernel.problem_tile(problem, config, 0) == config);
      problem.causal = false;
      CHECK(fa3_wgmma_v7_kernel.problem_tile(problem, config, 0) == TileShape{128, longer});
      CHECK(fa3_wgmma_v6_kernel.problem_tile(problem, config, 0) == TileShape{128, longer});
    }
    // N 2048 and 4096: +3.1 % either way, and revision 6's longer block ran 0.5-2.8 % slower.
    for (const std::int64_t n : {2048, 4096, 100}) {
      CAPTURE(head_dim, n);
      problem.seq_len = n;
      CHECK(fa3_wgmma_v7_kernel.problem_tile(problem, config, 0) == config);
      CHECK(fa3_wgmma_v6_kernel.problem_tile(problem, config, 0) == TileShape{128, longer});
    }
    // The keys decide, not the queries: a 4096-query row over 8192 keys takes the longer block.
    problem.seq_len = 4096;
    problem.kv_len = 8192;
    CHECK(fa3_wgmma_v7_kernel.problem_tile(problem, config, 0) == TileShape{128, longer});
    problem.kv_len = 0;
  }
}

TEST_CASE("head groups: the most K/V heads, a divisor of all, whose K/V fit a quarter of the L2") {
  constexpr double mib = 1 << 20;
  constexpr double h200_l2 = 60 * mib;  // 2 partitions: 15 MiB a group
  // B1 H8, d 128, fp16: K and V of a head are 4 x N x 128 bytes.
  CHECK(kv_heads_per_group(8, 2 * mib, h200_l2, 2) == 4);   // N 4K: 7 fit, 4 divides 8
  CHECK(kv_heads_per_group(8, 4 * mib, h200_l2, 2) == 2);   // N 8K: 3 fit
  CHECK(kv_heads_per_group(8, 8 * mib, h200_l2, 2) == 1);   // N 16K
  CHECK(kv_heads_per_group(8, 64 * mib, h200_l2, 2) == 1);  // N 128K: never none
  CHECK(kv_heads_per_group(8, 1 * mib, h200_l2, 2) == 8);   // N 4K d 64: all 8
  CHECK(kv_heads_per_group(6, 3 * mib, h200_l2, 2) == 3);   // 5 fit, 3 divides 6
  CHECK(kv_heads_per_group(7, 1 * mib, h200_l2, 2) == 7);
  CHECK(kv_heads_per_group(7, 3 * mib, h200_l2, 2) == 1);  // 7 is prime
  // One partition holds the whole L2 (before the A100): twice the budget.
  CHECK(kv_heads_per_group(8, 4 * mib, h200_l2, 1) == 4);
  CHECK(l2_partitions_for({9, 0}) == 2);
  CHECK(l2_partitions_for({7, 5}) == 1);
  const AttentionProblem gqa{1, 32, 4096, 128, true, DType::bf16, 8192, 8};
  CHECK(kv_bytes_per_kv_head(gqa) == 2.0 * 8192 * 128 * 2);
}

TEST_CASE("a description that breaks a rule is named with the rule") {
  KernelDescription k = test_kernel;
  k.name = "";
  CHECK(problem_of(k) == "has no name");
  k.name = "fa2,mma";
  CHECK(problem_of(k) == "name has a character other than [A-Za-z0-9_.-]");

  k = test_kernel;
  k.dtypes = {};
  CHECK(problem_of(k) == "has no dtype");

  constexpr std::array<int, 2> descending{128, 64};
  k = test_kernel;
  k.head_dims = descending;
  CHECK(problem_of(k) == "head dims are not positive and ascending");

  k = test_kernel;
  k.min_compute_capability = {0, 0};
  CHECK(problem_of(k) == "minimum compute capability is not one");

  constexpr std::array<ConfigRule, 1> too_small{{{.max_head_dim = 128, .config = {{64, 64}}}}};
  k = test_kernel;
  k.configs = too_small;  // nothing for d = 256
  CHECK(problem_of(k) == "a head dim has no config rule on its oldest architecture");

  constexpr std::array<ConfigRule, 1> newer_only{
      {{.max_head_dim = 256, .min_cc = {9, 0}, .config = {{64, 64}}}}};
  k = test_kernel;
  k.configs = newer_only;  // nothing on 8.0, the kernel's oldest
  CHECK(problem_of(k) == "a head dim has no config rule on its oldest architecture");

  constexpr std::array<ConfigRule, 1> no_tile{{{.max_head_dim = 256}}};
  k = test_kernel;
  k.configs = no_tile;
  CHECK(problem_of(k) ==
        "a config rule has no tile, or warps, stages or CTAs per SM that cannot be");

  constexpr std::array<GridLaunch, 1> two_heads{
      {{"forward", {GridAxis::q_blocks, GridAxis::heads, GridAxis::heads}}}};
  k = test_kernel;
  k.launches = two_heads;
  CHECK(problem_of(k) == "a launch order is not one block axis, heads and batch");

  constexpr std::array<GridLaunch, 1> grouped_blocks_first{
      {{"forward",
        {GridAxis::q_blocks, GridAxis::heads, GridAxis::batch},
        CausalBlockOrder::heaviest_first,
        HeadGroups::fit_l2}}};
  k = test_kernel;
  k.launches = grouped_blocks_first;
  CHECK(problem_of(k) == "a launch groups its heads but does not walk heads fastest");

  k = test_kernel;
  k.traffic = TrafficModelKind::fa1_backward;
  CHECK(problem_of(k) == "traffic model is of the other direction");
  k = test_kernel;
  k.forward_partner = "fa1_scalar";
  CHECK(problem_of(k) == "a forward kernel names a forward partner");
  k = fa1_backward_kernel;
  k.forward_partner = "";
  CHECK(problem_of(k) == "a backward kernel names no forward partner");
}

TEST_CASE("the catalog rules: unique names, declared configs, partners that can feed") {
  const std::array twice{naive_kernel, fa1_scalar_kernel, naive_kernel};
  CHECK(catalog_error(twice).problem == "appears twice");

  // Tiles only (as a kernel added at run time may declare): a valid
  // description, but not a built-in one.
  constexpr std::array<ConfigRule, 1> tiles_only{{{.max_head_dim = 256, .config = {{64, 64}}}}};
  KernelDescription undeclared = test_kernel;
  undeclared.configs = tiles_only;
  CHECK_FALSE(description_error(undeclared));
  CHECK(catalog_error(std::array{undeclared}).problem ==
        "a config rule does not declare its warps, stages or CTAs per SM");

  KernelDescription no_launch = test_kernel;
  no_launch.launches = {};
  CHECK_FALSE(description_error(no_launch));
  CHECK(catalog_error(std::array{no_launch}).problem == "a tiled kernel lists no launch order");

  const std::array orphan{naive_kernel, fa1_backward_kernel};
  const DescriptionError error = catalog_error(orphan);
  CHECK(error.kernel == "fa1_bwd");
  CHECK(error.problem == "its forward partner is not a known kernel");

  // fa2_bwd takes GQA: fa1_wmma, with all its dtypes and head dims, has no GQA
  // O and LSE to give it.
  KernelDescription gqa_backward = fa2_backward_kernel;
  gqa_backward.forward_partner = "fa1_wmma";
  const std::array no_gqa_forward{fa1_wmma_kernel, gqa_backward};
  CHECK(catalog_error(no_gqa_forward).problem ==
        "its forward partner does not take every shape it takes");
}

TEST_CASE("a kernel's shapes cover another's when it takes each kind of served shape it takes") {
  const ShapeSupport square{};
  const ShapeSupport gqa{.kv_heads = true};
  const ShapeSupport decode{.kv_len = true, .kv_heads = true, .paged = true, .max_q_len = 16};
  CHECK(square.covers(square));
  CHECK(gqa.covers(square));
  CHECK_FALSE(square.covers(gqa));
  CHECK(fa2_mma_kernel.shapes.covers(fa2_backward_kernel.shapes));
  CHECK_FALSE(fa2_mma_kernel.shapes.covers(decode));  // pages
  CHECK(decode.covers(fa2_mma_kernel.shapes));        // the token limit is not compared
}

TEST_CASE("docs/model.md's kernel table has each catalog kernel's row, direction and traffic") {
  // The one documentation row a new kernel needs (docs/kernels.md, "Adding a kernel"): its
  // tiles and units in words. Its direction and traffic model must be the catalog's.
  const std::string doc = test::read_text(std::string(CFR_SOURCE_ROOT) + "/docs/model.md");
  for (const KernelDescription& kernel : kernel_catalog) {
    INFO(kernel.name);
    const std::size_t row =
        doc.find(fmt::format("\n| `{}` | {} |", kernel.name, to_string(kernel.direction)));
    REQUIRE(row != std::string::npos);
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    // The last cell, the traffic model: "`kv_reload`", or "`split_kv` (§7)".
    const std::size_t last_cell = line.rfind('|', line.size() - 2);
    CHECK(line.substr(last_cell).starts_with(fmt::format("| `{}`", to_string(kernel.traffic))));
  }
}

// The backward main launch of fa2_bwd, fa2_bwd_2d and fa3_bwd from revision
// 2: K/V blocks fastest without a mask, heads fastest in groups that fill
// the resident slots when causal (kernel_catalog.hpp, fa2_backward_launches).
TEST_CASE("the backward's causal grid: heads fastest in groups that fill the GPU") {
  for (const KernelDescription* kernel :
       {&fa2_backward_kernel, &fa2_backward_2d_kernel, &fa3_backward_kernel}) {
    INFO(kernel->name);
    // fa2_bwd_2d's revisions 3-10 changed its dQ atomics, its order of work,
    // where S's K fragments live, which warps hold dK, dV and dQ and how a
    // ragged K/V block is masked, not its launches.
    CHECK(kernel->revision == (kernel == &fa2_backward_2d_kernel ? 10 : 2));
    CHECK(kernel->unrecorded_revision() == 1);  // rows written before: the old grid
    const KernelDescription* v1 = kernel->at_revision(1);
    REQUIRE(v1 != nullptr);
    CHECK(v1->name == kernel->name);
    CHECK(v1->configs.data() == kernel->configs.data());
    const GridLaunch& main = kernel->launches[1];
    const GridLaunch& old = v1->launches[1];
    CHECK(grid_order_for(main, false) ==
          GridOrder{GridAxis::kv_blocks, GridAxis::heads, GridAxis::batch});
    CHECK(grid_order_for(main, true) ==
          GridOrder{GridAxis::heads, GridAxis::kv_blocks, GridAxis::batch});
    CHECK(main.head_groups == HeadGroups::fill_slots);
    CHECK(grid_order_for(old, true) == grid_order_for(old, false));
    CHECK(grid_order_for(old, true) == grid_order_for(main, false));
    CHECK_FALSE(description_error(*kernel));
  }
  // fa2_bwd_2d's revisions 2-9 are revision 10's launches, tiles and
  // traffic model.
  for (int revision : {2, 3, 4, 5, 6, 7, 8, 9}) {
    INFO("fa2_bwd_2d revision " << revision);
    const KernelDescription* earlier = fa2_backward_2d_kernel.at_revision(revision);
    REQUIRE(earlier != nullptr);
    CHECK(earlier->revision == revision);
    CHECK(earlier->launches.data() == fa2_backward_2d_kernel.launches.data());
    CHECK(earlier->configs.data() == fa2_backward_2d_kernel.configs.data());
    CHECK(earlier->traffic == fa2_backward_2d_kernel.traffic);
  }
  // From revision 3 the dQ accumulator is in fragment order, as now.
  for (int revision : {3, 4, 5, 6, 7, 8, 9}) {
    INFO("fa2_bwd_2d revision " << revision);
    CHECK(fa2_backward_2d_kernel.at_revision(revision)->summary == fa2_backward_2d_kernel.summary);
  }
  CHECK(fa2_backward_2d_kernel.at_revision(10) == &fa2_backward_2d_kernel);
  // One order for both masks where the launch names no causal grid.
  CHECK(grid_order_for(fa3_wgmma_kernel.launches[0], true) == fa3_wgmma_kernel.launches[0].order);

  const GridLaunch& main = fa2_backward_kernel.launches[1];
  const double l2 = 60.0 * (1 << 20);
  const auto group = [&](AttentionProblem problem, std::int64_t blocks, std::int64_t slots) {
    return kv_heads_per_group(main, problem, l2, 2, blocks, slots);
  };
  AttentionProblem problem{.heads = 8, .seq_len = 4096, .head_dim = 128, .causal = true};
  CHECK(group(problem, 32, 132) == 8);   // 4 heads' 128 CTAs fall short of 132
  CHECK(group(problem, 64, 132) == 4);   // N 8K: 2 heads' 128 do too
  CHECK(group(problem, 128, 132) == 2);  // N 16K
  CHECK(group(problem, 133, 132) == 1);  // a head alone fills the GPU: blocks fastest
  problem.heads = 32;
  problem.kv_heads = 8;  // GQA: groups of K/V heads
  CHECK(group(problem, 64, 132) == 4);
  problem.batch = 3;  // batch and heads as one index: 24 K/V heads
  CHECK(group(problem, 64, 132) == 3);
  problem.causal = false;  // no mask: blocks fastest, no groups
  CHECK(group(problem, 64, 132) == 0);
  CHECK(kv_heads_filling(7, 10, 132) == 7);  // no divisor fills: all of them
  CHECK(kv_heads_filling(8, 10, 0) == 1);
}

TEST_CASE("a causal grid is checked like an order: the launch's axes, its block axis") {
  const auto problem_of = [](const GridLaunch& launch) {
    KernelDescription kernel = fa2_backward_kernel;
    kernel.earlier_revisions = {};
    kernel.revision = 1;
    const std::array<GridLaunch, 3> launches{fa2_backward_kernel.launches[0], launch,
                                             fa2_backward_kernel.launches[2]};
    kernel.launches = launches;
    return std::string(description_error(kernel).problem);
  };
  GridLaunch launch = fa2_backward_kernel.launches[1];
  CHECK(problem_of(launch).empty());
  launch.causal_grid = {GridAxis::heads, GridAxis::q_blocks, GridAxis::batch};
  CHECK(problem_of(launch) == "a launch's causal grid is not its axes in another order");
  launch.causal_grid = {GridAxis::heads, GridAxis::heads, GridAxis::batch};
  CHECK(problem_of(launch) == "a launch's causal grid is not its axes in another order");
  launch.causal_grid = {};  // groups without heads fastest in either order
  CHECK(problem_of(launch) == "a launch groups its heads but does not walk heads fastest");
}
