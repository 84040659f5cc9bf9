#pragma once

// What the tool knows of an attention kernel (docs/kernels.md): its dtypes,
// head dims and oldest architecture, the tile, warps, pipeline stages and
// resident CTAs it runs with per head dim (and per architecture where they
// differ), the order its CTAs are launched in, its compute unit and traffic
// model; and the rules every description keeps. The built-in descriptions are
// in kernel_catalog.hpp.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/core/compute_capability.hpp"
#include "roofline/core/compute_unit.hpp"
#include "roofline/core/dtype.hpp"

namespace cfr {

class OwnByteCount;  // own_byte_count.hpp

enum class Direction { forward, backward };

constexpr std::string_view to_string(Direction direction) {
  return direction == Direction::forward ? "forward" : "backward";
}

constexpr std::optional<Direction> parse_direction(std::string_view text) {
  if (text == "forward") return Direction::forward;
  if (text == "backward") return Direction::backward;
  return std::nullopt;
}

// Which byte model describes the kernel's HBM traffic (see docs/model.md).
// l2_aware is never a kernel's own: it simulates the L2 over the kernel's
// launches (l2_aware_model.hpp) and predicts the DRAM bytes where it applies.
// plugin is the kernel's own count per problem, through its own_bytes
// (own_byte_count.hpp): a total with no per-tensor breakdown, of either
// direction. split_kv is flash-decoding's: a CTA per (split of the keys,
// block of a K/V head's group rows), so K/V once per row block, and the
// splits' partial outputs.
enum class TrafficModelKind {
  compulsory,
  materialized,
  kv_reload,
  fa1_backward,
  fa2_backward,
  l2_aware,
  plugin,
  split_kv
};

constexpr std::string_view to_string(TrafficModelKind kind) {
  switch (kind) {
    case TrafficModelKind::compulsory: return "compulsory";
    case TrafficModelKind::materialized: return "materialized";
    case TrafficModelKind::kv_reload: return "kv_reload";
    case TrafficModelKind::fa1_backward: return "fa1_backward";
    case TrafficModelKind::fa2_backward: return "fa2_backward";
    case TrafficModelKind::l2_aware: return "l2_aware";
    case TrafficModelKind::plugin: return "plugin";
    case TrafficModelKind::split_kv: return "split_kv";
  }
  return "?";
}

std::optional<TrafficModelKind> parse_traffic_model(std::string_view text);

// The models of a backward kernel's loop structure: fa1_backward (a dK/dV
// pass and a dQ pass, no atomics) and fa2_backward (one pass per K/V block,
// dQ through fp32 atomics).
constexpr bool is_backward_model(TrafficModelKind kind) {
  return kind == TrafficModelKind::fa1_backward || kind == TrafficModelKind::fa2_backward;
}

// Br rows of Q per CTA, Bc rows of K/V per inner step. {0, 0} means the kernel
// is not tiled (the materialized path runs library GEMMs).
struct TileShape {
  int br = 0;
  int bc = 0;
  constexpr bool tiled() const { return br > 0 && bc > 0; }
  friend constexpr bool operator==(TileShape, TileShape) = default;
};

// How a kernel runs at one head dim on one architecture.
struct KernelConfig {
  TileShape tile{};
  int warps = 0;   // per CTA: 32 * warps threads
  int stages = 0;  // K/V tiles in flight: 1 loads then computes, 2 prefetches the next, ...
  // Resident CTAs per SM the kernel is built for: its __launch_bounds__
  // minimum, or what its shared memory allows. With the SM count it is the
  // number of CTAs running at once, the concurrency an L2 model needs.
  int ctas_per_sm = 0;
  // A paged cache's page indices one split of a split-KV launch copies into
  // shared memory when they number at most this (fa2_decode; 0: every tile
  // reads them from the table in global memory). kv_splits.hpp plans with it.
  int page_table_entries = 0;

  constexpr int threads() const { return 32 * warps; }
  friend constexpr bool operator==(const KernelConfig&, const KernelConfig&) = default;
};

// A config applies to the kernel's head dims up to and including
// max_head_dim, on GPUs of compute capability min_cc or newer ({0, 0}: on
// every architecture the kernel runs on). The first rule that applies wins,
// so a rule for a newer architecture comes before the general rule of the
// same head dims.
struct ConfigRule {
  int max_head_dim = 0;
  ComputeCapability min_cc{};
  KernelConfig config{};
};

// What one grid axis of a launch walks: the Br-row Q blocks or the Bc-row K/V
// blocks of a head, the heads of a batch entry, the batch.
enum class GridAxis { q_blocks, kv_blocks, heads, batch };

constexpr std::string_view to_string(GridAxis axis) {
  switch (axis) {
    case GridAxis::q_blocks: return "q_blocks";
    case GridAxis::kv_blocks: return "kv_blocks";
    case GridAxis::heads: return "heads";
    case GridAxis::batch: return "batch";
  }
  return "?";
}

// The axes of blockIdx.x, .y and .z. The hardware hands out CTAs in linear
// block order, x fastest (observed, not promised by CUDA), so the first axis
// is the one whose CTAs run side by side and share their K/V (or Q) in L2.
using GridOrder = std::array<GridAxis, 3>;

// Which row block the CTA with blockIdx.x = x owns when causal: block x
// (natural), or the blocks in decreasing order of their stream length
// (heaviest first, so that the last wave holds the short CTAs). For a grid of
// Q blocks heaviest first is the last block first (fa2_mma); a grid of K/V
// blocks (fa1_bwd's dK/dV) is heaviest first in natural order already.
enum class CausalBlockOrder { natural, heaviest_first };

// How a launch with heads fastest walks them: all heads side by side, or
// one group of K/V heads after another (kv_heads_per_group), each group's
// row blocks heaviest first with its heads fastest. Heads fastest is what
// balances causal work (every head's heaviest block comes first, so the last
// wave holds the light blocks); the groups keep the K/V of the heads running
// side by side inside the L2 (fa3_wgmma, kernels/fa3_tiles.hpp). fill_slots:
// the fewest K/V heads whose CTAs fill the GPU's resident slots, so that the
// heaviest blocks of a group still start in its first wave while the heads
// running side by side stay few (fa2_bwd's causal main launch).
enum class HeadGroups { all, fit_l2, fill_slots };

// One tiled launch of a kernel's run. The launcher builds its grid from
// `order` and the kernel reads blockIdx through the same order
// (kernels/launch_preamble.cuh), so this is the order the kernel runs in.
struct GridLaunch {
  std::string_view pass{};  // what it computes: "forward", "dK dV", "dQ"
  GridOrder order{};
  CausalBlockOrder causal_order = CausalBlockOrder::natural;
  HeadGroups head_groups = HeadGroups::all;
  // The order of a causal problem's grid where it differs from `order`;
  // left {} (no permutation of the axes), `order` serves both masks. A grid
  // of K/V blocks with its blocks fastest dispatches every block of a head
  // before the next head's heaviest one, so under a causal mask the last
  // heads' longest CTAs start late and run alone; heads fastest starts
  // every head's heaviest blocks first (fa2_bwd's main launch from
  // revision 2, docs/perf-notes.md). Without a mask every CTA is alike and
  // blocks fastest keeps a head's Q and dO stream in the L2. `head_groups`
  // applies to whichever of the two walks heads fastest.
  GridOrder causal_grid{};
};

// The grid order `launch` takes for a problem with or without the causal
// mask: the one rule the launcher, the kernel's grid_position and the
// traffic models read.
constexpr GridOrder grid_order_for(const GridLaunch& launch, bool causal) {
  return causal && launch.causal_grid != GridOrder{} ? launch.causal_grid : launch.order;
}

// The row-block axis of a launch order: q_blocks or kv_blocks.
constexpr GridAxis block_axis_of(const GridOrder& order) {
  for (GridAxis axis : order) {
    if (axis == GridAxis::q_blocks || axis == GridAxis::kv_blocks) return axis;
  }
  return GridAxis::q_blocks;
}

// L2 partitions that each hold their own copy of a line read from both
// sides: 2 from the A100 on (NVIDIA A100 whitepaper, "A100 L2 cache"; GH100
// is built the same way), 1 before.
constexpr int l2_partitions_for(ComputeCapability cc) {
  return cc >= ComputeCapability{8, 0} ? 2 : 1;
}

// The bytes of one K/V head's K and V.
constexpr double kv_bytes_per_kv_head(const AttentionProblem& problem) {
  return 2.0 * static_cast<double>(problem.keys()) * static_cast<double>(problem.head_dim) *
         element_bytes(problem.dtype);
}

// The K/V heads of one group under HeadGroups::fit_l2: the most, a divisor
// of all `kv_heads` (so every group is alike), whose K and V together take at
// most a quarter of the L2 (half of one of its `partitions` on the H200:
// Q, O and CTAs that drift apart keep the rest), at least 1.
constexpr std::int64_t kv_heads_per_group(std::int64_t kv_heads, double kv_bytes_per_kv_head,
                                          double l2_bytes, int partitions) {
  const double budget = l2_bytes / (2.0 * (partitions > 0 ? partitions : 1));
  std::int64_t best = 1;
  for (std::int64_t size = 1; size <= kv_heads; ++size) {
    if (kv_heads % size == 0 && static_cast<double>(size) * kv_bytes_per_kv_head <= budget) {
      best = size;
    }
  }
  return best;
}

// The K/V heads of one group under HeadGroups::fill_slots: the fewest, a
// divisor of all `kv_heads`, whose `blocks_per_head` CTAs each fill `slots`
// (the CTAs resident at once); all of them where no fewer do.
constexpr std::int64_t kv_heads_filling(std::int64_t kv_heads, std::int64_t blocks_per_head,
                                        std::int64_t slots) {
  for (std::int64_t size = 1; size < kv_heads; ++size) {
    if (kv_heads % size == 0 && size * blocks_per_head >= slots) return size;
  }
  return kv_heads;
}

// The K/V heads `launch` walks side by side for `problem` on an L2 of
// `l2_bytes` in `partitions`, with `blocks_per_head` CTAs a head along the
// launch's block axis and `slots` CTAs resident at once: its groups' size
// where the order it takes for the problem walks heads fastest in groups
// (HeadGroups), 0 (no groups) otherwise. The one rule the L2 model's geometry
// and the launcher both read.
constexpr std::int64_t kv_heads_per_group(const GridLaunch& launch, const AttentionProblem& problem,
                                          double l2_bytes, int partitions,
                                          std::int64_t blocks_per_head, std::int64_t slots) {
  if (grid_order_for(launch, problem.causal)[0] != GridAxis::heads) return 0;
  switch (launch.head_groups) {
    case HeadGroups::all: return 0;
    case HeadGroups::fit_l2:
      return kv_heads_per_group(problem.kv_heads_total(), kv_bytes_per_kv_head(problem), l2_bytes,
                                partitions);
    case HeadGroups::fill_slots:
      return kv_heads_filling(problem.kv_heads_total(), blocks_per_head, slots);
  }
  return 0;
}

// CUDA's grid limits: blockIdx.x up to 2^31 - 1, .y and .z up to 65535.
inline constexpr std::array<std::int64_t, 3> max_grid_extent{2147483647, 65535, 65535};

// How many CTAs a tiled launch puts along `axis` for a [batch, heads,
// seq_len, ·] problem: the one count the launcher builds its grid from and
// the planner checks against max_grid_extent.
constexpr std::int64_t blocks_along(GridAxis axis, std::int64_t batch, std::int64_t heads,
                                    std::int64_t seq_len, TileShape tile) {
  switch (axis) {
    case GridAxis::q_blocks: return (seq_len + tile.br - 1) / tile.br;
    case GridAxis::kv_blocks: return (seq_len + tile.bc - 1) / tile.bc;
    case GridAxis::heads: return heads;
    case GridAxis::batch: return batch;
  }
  return 0;
}

// How a kernel's arithmetic maps to a compute unit.
enum class ArithmeticPath {
  fp32_simt,         // fp32 FMAs on CUDA cores whatever the I/O dtype
  tensor_for_dtype,  // fp16 -> fp16 tensor, bf16 -> bf16 tensor (fp32 accumulate)
  library_gemm,      // cuBLAS: tensor cores for fp16/bf16, fp32 SIMT for fp32
};

// The instruction a kernel's matmuls issue, whose measured roof `ceilings`
// gives (docs/model.md §8.3): a row is judged against it as well as against
// its unit's peak. WMMA m16n16k16 compiles to the same HMMA instructions as
// mma.sync m16n8k16, so they share a roof. unspecified: a kernel that does
// not say (a plugin's).
enum class Instruction { unspecified, mma_sync, wmma, wgmma, ffma, library_gemm };

// The shapes beyond square self-attention a kernel computes (issue 25): K/V
// of another length than Q (decode, a KV cache, the bottom-right causal
// mask), fewer K/V heads than query heads (GQA, MQA), a paged cache; and the
// most query tokens it is built for (0: any). kv_per_group: it reads a K/V
// head's K/V once for all the query heads of its group (split_kv), not once
// per query head (kv_reload): the traffic models' fact.
struct ShapeSupport {
  bool kv_len = false;
  bool kv_heads = false;
  bool paged = false;
  int max_q_len = 0;
  // Why it refuses the served shapes its flags above refuse, when that is no
  // choice of the kernel's (a plugin of an ABI version without the served
  // shapes; a peer's backward, of which the backward models count GQA but no
  // Nk != Nq or paged cache): the reason a row of such a shape is skipped.
  // Empty for every other kernel, whose refusals name the shape.
  std::string_view served_shapes_reason{};

  // Whether a kernel of this support takes every kind of served shape one of
  // `other` takes (a backward kernel's forward partner must: it makes the O
  // and LSE). The query-token limit is not compared: a plugin's forward may
  // be built for fewer tokens than its backward, whose rows past it skip.
  constexpr bool covers(const ShapeSupport& other) const {
    return (kv_len || !other.kv_len) && (kv_heads || !other.kv_heads) && (paged || !other.paged);
  }
};

struct DTypeSet {
  bool fp16 = false;
  bool bf16 = false;
  bool fp32 = false;
  constexpr bool contains(DType dtype) const {
    return dtype == DType::fp16 ? fp16 : dtype == DType::bf16 ? bf16 : fp32;
  }
  constexpr bool contains(DTypeSet other) const {
    return (fp16 || !other.fp16) && (bf16 || !other.bf16) && (fp32 || !other.fp32);
  }
  constexpr bool empty() const { return !fp16 && !bf16 && !fp32; }
};

// A kernel as the tool knows it. Its strings and lists are views: into the
// constants of kernel_catalog.hpp for a built-in kernel, and into storage the
// runtime registry owns for a kernel added at run time
// (kernels/kernel_registry.hpp).
// Views rather than owning strings and vectors keep one type for both: the
// built-in descriptions stay constexpr, so the .cu files instantiate their
// templates from them and static_assert against them.
struct KernelDescription {
  std::string_view name{};
  Direction direction = Direction::forward;
  DTypeSet dtypes{};
  std::span<const int> head_dims{};  // ascending
  // The oldest architecture its code runs on (cp.async and bf16 MMA need 8.0).
  ComputeCapability min_compute_capability{};
  std::span<const ConfigRule> configs{};  // ordered by max_head_dim; empty for library kernels
  // Its tiled launches in order; empty when a library chooses its own.
  std::span<const GridLaunch> launches{};
  ArithmeticPath arithmetic = ArithmeticPath::fp32_simt;
  Instruction instruction = Instruction::unspecified;
  TrafficModelKind traffic = TrafficModelKind::compulsory;
  // A backward kernel: the forward kernel whose O and LSE it is given.
  std::string_view forward_partner{};
  std::string_view summary{};
  // Its own HBM byte count, with traffic `plugin` and only then; it outlives
  // the description (a plugin's, kept for the process: plugin_loader.cpp).
  const OwnByteCount* own_bytes = nullptr;
  ShapeSupport shapes{};
  // The rows of Q a CTA owns for a problem where they depend on more than the
  // head dim (fa2_decode: one or four 16-row MMA tiles of a K/V head's group
  // rows); null: the config's tile. The launcher picks by the same function.
  // `sm_count`: the SMs of the GPU it launches on, 0 where unknown (a rule
  // that needs it then keeps the tile it takes without).
  TileShape (*problem_tile)(const AttentionProblem&, TileShape config_tile, int sm_count) = nullptr;
  // Which build of the kernel this is, and the earlier builds whose rows
  // committed reports still hold, oldest first: each a whole description
  // (its launches as that build ran them), so the models, the catalog check
  // and `audit` read an earlier row as it ran rather than as today's build
  // would run it. A row records the revision it ran (ResultRow::
  // kernel_revision) where the kernel lists earlier ones; a row that records
  // none ran the oldest listed (rows were written before revisions were).
  int revision = 1;
  std::span<const KernelDescription* const> earlier_revisions{};

  constexpr bool supports_head_dim(int head_dim) const {
    for (int supported : head_dims) {
      if (supported == head_dim) return true;
    }
    return false;
  }

  constexpr bool runs_on(ComputeCapability cc) const { return cc >= min_compute_capability; }

  // The config at a supported head dim on a GPU of compute capability `cc`;
  // {} (untiled) for a library kernel or where no rule applies.
  constexpr KernelConfig config_for(int head_dim, ComputeCapability cc) const {
    for (const ConfigRule& rule : configs) {
      if (head_dim <= rule.max_head_dim && cc >= rule.min_cc) return rule.config;
    }
    return {};
  }

  constexpr TileShape tile_for(int head_dim, ComputeCapability cc) const {
    return config_for(head_dim, cc).tile;
  }

  // Whether the config at `head_dim` is the same on every architecture the
  // kernel runs on: it changes only where a rule's min_cc begins.
  constexpr bool config_independent_of_arch(int head_dim) const {
    const KernelConfig oldest = config_for(head_dim, min_compute_capability);
    for (const ConfigRule& rule : configs) {
      if (rule.min_cc > min_compute_capability && config_for(head_dim, rule.min_cc) != oldest) {
        return false;
      }
    }
    return true;
  }

  // The revision a row that records none ran: the oldest listed.
  constexpr int unrecorded_revision() const {
    return earlier_revisions.empty() ? revision : earlier_revisions.front()->revision;
  }

  // This kernel as its revision `number` was built; null when it lists none
  // of that number.
  constexpr const KernelDescription* at_revision(int number) const {
    if (number == revision) return this;
    for (const KernelDescription* earlier : earlier_revisions) {
      if (earlier != nullptr && earlier->revision == number) return earlier;
    }
    return nullptr;
  }

  constexpr ComputeUnit compute_unit_for(DType dtype) const {
    if (arithmetic == ArithmeticPath::fp32_simt || dtype == DType::fp32) {
      return ComputeUnit::fp32_simt;
    }
    return dtype == DType::bf16 ? ComputeUnit::bf16_tensor : ComputeUnit::fp16_tensor;
  }
};

// What is wrong with a description, or with a set of them: `kernel` names the
// description (empty when it has no name), `problem` says what; both empty
// when nothing is. Compile-time checks of the built-in catalog and run-time
// checks of a kernel added to the registry share these rules.
struct DescriptionError {
  std::string_view kernel{};
  std::string_view problem{};
  constexpr explicit operator bool() const { return !problem.empty(); }
};

// Why `kernel` cannot compute `problem`'s shape (its K/V length, K/V heads,
// paged cache or query tokens); empty when it can.
std::optional<std::string> shape_reason(const KernelDescription& kernel,
                                        const AttentionProblem& problem);

// Why `kernel` cannot run on a GPU of compute capability `cc` (older than
// its minimum); empty when it can.
std::optional<std::string> below_minimum_reason(const KernelDescription& kernel,
                                                ComputeCapability cc);

// Why one of `kernel`'s launches at `tile` cannot be built for `problem` (an
// axis longer than CUDA allows, e.g. batch 65536 on blockIdx.y); empty when
// every launch fits.
std::optional<std::string> grid_limit_reason(const KernelDescription& kernel,
                                             const AttentionProblem& problem, TileShape tile);

// The distinct tiles `kernel` runs with at `head_dim` on any architecture it
// runs on, its oldest first.
std::vector<TileShape> tiles_on_any_arch(const KernelDescription& kernel, int head_dim);

// ---------------------------------------------------------------------------
// The rules every description keeps.

namespace catalog_detail {

constexpr bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

constexpr bool has_axis(const GridOrder& order, GridAxis wanted) {
  for (GridAxis axis : order) {
    if (axis == wanted) return true;
  }
  return false;
}

constexpr bool is_permutation_of_axes(const GridOrder& order) {
  int q = 0, kv = 0, heads = 0, batch = 0;
  for (GridAxis axis : order) {
    q += axis == GridAxis::q_blocks;
    kv += axis == GridAxis::kv_blocks;
    heads += axis == GridAxis::heads;
    batch += axis == GridAxis::batch;
  }
  return q + kv == 1 && heads == 1 && batch == 1;
}

// 0 warps, stages or CTAs per SM: not declared (a kernel that comes with
// its tiles only); the built-in kernels declare all (catalog_error).
constexpr bool config_is_possible(const KernelConfig& config) {
  return config.tile.tiled() && config.warps >= 0 && config.warps <= 32 && config.stages >= 0 &&
         config.ctas_per_sm >= 0 && config.page_table_entries >= 0;
}

constexpr bool config_is_declared(const KernelConfig& config) {
  return config.warps > 0 && config.stages > 0 && config.ctas_per_sm > 0;
}

constexpr bool needs_tiles(const KernelDescription& kernel) {
  return kernel.arithmetic != ArithmeticPath::library_gemm ||
         kernel.traffic == TrafficModelKind::kv_reload || is_backward_model(kernel.traffic);
}

}  // namespace catalog_detail

constexpr DescriptionError description_error(const KernelDescription& kernel) {
  using namespace catalog_detail;
  const auto error = [&](std::string_view problem) {
    return DescriptionError{kernel.name, problem};
  };
  if (kernel.name.empty()) return error("has no name");
  for (char c : kernel.name) {
    if (!is_name_character(c)) return error("name has a character other than [A-Za-z0-9_.-]");
  }
  if (kernel.dtypes.empty()) return error("has no dtype");
  if (kernel.head_dims.empty()) return error("has no head dim");
  int previous = 0;
  for (int head_dim : kernel.head_dims) {
    if (head_dim <= previous) return error("head dims are not positive and ascending");
    previous = head_dim;
  }
  if (kernel.min_compute_capability.major < 1 || kernel.min_compute_capability.minor < 0 ||
      kernel.min_compute_capability.minor > 9) {
    return error("minimum compute capability is not one");
  }
  int previous_max = 0;
  for (const ConfigRule& rule : kernel.configs) {
    if (!config_is_possible(rule.config)) {
      return error("a config rule has no tile, or warps, stages or CTAs per SM that cannot be");
    }
    if (rule.max_head_dim < previous_max) return error("config rules are not ordered by head dim");
    previous_max = rule.max_head_dim;
  }
  if (needs_tiles(kernel)) {
    for (int head_dim : kernel.head_dims) {
      if (!kernel.config_for(head_dim, kernel.min_compute_capability).tile.tiled()) {
        return error("a head dim has no config rule on its oldest architecture");
      }
    }
  }
  for (const GridLaunch& launch : kernel.launches) {
    if (launch.pass.empty()) return error("a launch has no pass name");
    if (!is_permutation_of_axes(launch.order)) {
      return error("a launch order is not one block axis, heads and batch");
    }
    if (launch.causal_grid != GridOrder{} && (!is_permutation_of_axes(launch.causal_grid) ||
                                              has_axis(launch.causal_grid, GridAxis::q_blocks) !=
                                                  has_axis(launch.order, GridAxis::q_blocks))) {
      return error("a launch's causal grid is not its axes in another order");
    }
    if (launch.head_groups != HeadGroups::all && launch.order[0] != GridAxis::heads &&
        launch.causal_grid[0] != GridAxis::heads) {
      return error("a launch groups its heads but does not walk heads fastest");
    }
  }
  if (kernel.traffic == TrafficModelKind::l2_aware) {
    return error("l2_aware is derived from the kernel's launches, not a kernel's own model");
  }
  if (kernel.revision < 1) return error("revision is not positive");
  int previous_revision = 0;
  for (const KernelDescription* earlier : kernel.earlier_revisions) {
    if (earlier == nullptr || earlier->name != kernel.name) {
      return error("an earlier revision is not a description of the same kernel");
    }
    if (earlier->revision <= previous_revision || earlier->revision >= kernel.revision) {
      return error("earlier revisions are not ascending below its own");
    }
    if (!earlier->earlier_revisions.empty()) {
      return error("an earlier revision lists earlier revisions of its own");
    }
    if (const DescriptionError inner = description_error(*earlier)) return inner;
    previous_revision = earlier->revision;
  }
  const bool own_count = kernel.traffic == TrafficModelKind::plugin;
  if (own_count != (kernel.own_bytes != nullptr)) {
    return error("gives its own byte count without the plugin traffic model, or the reverse");
  }
  const bool backward = kernel.direction == Direction::backward;
  if (!own_count && is_backward_model(kernel.traffic) != backward) {
    return error("traffic model is of the other direction");
  }
  if (backward && kernel.forward_partner.empty()) {
    return error("a backward kernel names no forward partner");
  }
  if (!backward && !kernel.forward_partner.empty()) {
    return error("a forward kernel names a forward partner");
  }
  return {};
}

// Where `backward` gets its O and LSE from, checked against `forward`: a
// forward kernel with every dtype, head dim and shape of the backward,
// running on every architecture the backward runs on.
constexpr std::string_view partner_problem(const KernelDescription& backward,
                                           const KernelDescription* forward) {
  if (forward == nullptr) return "its forward partner is not a known kernel";
  if (forward->direction != Direction::forward)
    return "its forward partner is not a forward kernel";
  if (!forward->dtypes.contains(backward.dtypes)) {
    return "its forward partner lacks one of its dtypes";
  }
  for (int head_dim : backward.head_dims) {
    if (!forward->supports_head_dim(head_dim))
      return "its forward partner lacks one of its head dims";
  }
  if (forward->min_compute_capability > backward.min_compute_capability) {
    return "its forward partner needs a newer GPU than it does";
  }
  if (!forward->shapes.covers(backward.shapes)) {
    return "its forward partner does not take every shape it takes";
  }
  return {};
}

// The built-in kernels: each keeps description_error's rules and declares
// all it can (warps, stages and CTAs per SM of every config, the launch order
// of a tiled kernel), no two share a name, and every backward kernel's
// forward partner is among them and can feed it.
constexpr DescriptionError catalog_error(std::span<const KernelDescription> kernels) {
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    if (const DescriptionError error = description_error(kernels[i])) return error;
    for (const ConfigRule& rule : kernels[i].configs) {
      if (!catalog_detail::config_is_declared(rule.config)) {
        return {kernels[i].name, "a config rule does not declare its warps, stages or CTAs per SM"};
      }
    }
    if (catalog_detail::needs_tiles(kernels[i]) && kernels[i].launches.empty()) {
      return {kernels[i].name, "a tiled kernel lists no launch order"};
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (kernels[j].name == kernels[i].name) return {kernels[i].name, "appears twice"};
    }
  }
  for (const KernelDescription& kernel : kernels) {
    if (kernel.direction != Direction::backward) continue;
    const KernelDescription* forward = nullptr;
    for (const KernelDescription& other : kernels) {
      if (other.name == kernel.forward_partner) forward = &other;
    }
    if (const std::string_view problem = partner_problem(kernel, forward); !problem.empty()) {
      return {kernel.name, problem};
    }
  }
  return {};
}

}  // namespace cfr
