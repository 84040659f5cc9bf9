// Pins what an L2 model revision changes (roofline/model/l2_aware_model.hpp):
// revision 1 simulated fa3_wgmma's launches with the config's 128-key
// blocks, revision 2 with the blocks the kernel runs (its problem_tile: 192
// keys at d 64, 176 at d 128, without a mask where they pad little). Each is
// the simulation of a description whose config holds that tile.

#include <catch2/catch.hpp>

#include <array>
#include <utility>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"

using namespace cfr;

namespace {

// An H100 SXM's figures: 50 MiB of L2 in two partitions, 132 SMs.
L2ModelInputs h100(int revision) {
  L2ModelInputs inputs{52428800, 2, 132, {9, 0}, "test"};
  inputs.revision = revision;
  return inputs;
}

// The point and the interval's low bound.
std::pair<double, double> bytes_of(const KernelDescription& kernel, const AttentionProblem& problem,
                                   const L2ModelInputs& inputs) {
  const auto estimate = l2_aware_dram(kernel, problem, inputs);
  const auto interval = l2_aware_interval(kernel, problem, inputs);
  REQUIRE(estimate.has_value());
  REQUIRE(interval.has_value());
  return {estimate->bytes(), interval->low};
}

}  // namespace

TEST_CASE("L2 model revision 2 simulates fa3_wgmma's launched blocks, revision 1 the config's") {
  for (const int head_dim : {64, 128}) {
    // docs/model.md: B4 H16 N 5000 d 128's point moves 453.9 -> 451.8 MB, B1 H8 N 16K d 64's
    // low bound 52.90 -> 52.87 MB.
    const std::int64_t heads = head_dim == 64 ? 8 : 64;
    const std::int64_t n = head_dim == 64 ? 16384 : 5000;
    const AttentionProblem problem{1, heads, n, head_dim, false, DType::fp16};
    INFO("d " << head_dim);
    const TileShape config_tile = fa3_wgmma_kernel.tile_for(head_dim, {9, 0});
    const TileShape launched = fa3_wgmma_kernel.problem_tile(problem, config_tile, 132);
    REQUIRE(launched.bc > config_tile.bc);

    KernelDescription fixed = fa3_wgmma_kernel;  // the launched tile as its config
    fixed.problem_tile = nullptr;
    std::array<ConfigRule, 1> rule{fa3_wgmma_kernel.configs[0]};
    rule[0].config.tile = launched;
    fixed.configs = rule;
    KernelDescription as_configured = fixed;
    std::array<ConfigRule, 1> config_rule{fa3_wgmma_kernel.configs[0]};
    as_configured.configs = config_rule;

    const auto revision_1 = bytes_of(fa3_wgmma_kernel, problem, h100(1));
    const auto revision_2 = bytes_of(fa3_wgmma_kernel, problem, h100(2));
    CHECK(revision_1 == bytes_of(as_configured, problem, h100(2)));
    CHECK(revision_2 == bytes_of(fixed, problem, h100(2)));
    CHECK(revision_1 != revision_2);
    // Causal rows run the config's blocks (at N 4096 also revision 8's 128 rows at d 64): both
    // revisions agree.
    const AttentionProblem causal{1, heads, 4096, head_dim, true, DType::fp16};
    CHECK(bytes_of(fa3_wgmma_kernel, causal, h100(1)) ==
          bytes_of(fa3_wgmma_kernel, causal, h100(2)));
  }
}

TEST_CASE("new L2 model inputs carry the current revision") {
  CHECK(L2ModelInputs{}.revision == current_l2_model_revision);
  CHECK(current_l2_model_revision == 2);
}
