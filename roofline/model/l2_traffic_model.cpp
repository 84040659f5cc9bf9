#include "roofline/model/l2_traffic_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "roofline/core/shared_memo.hpp"
#include "roofline/model/l2_cache_sim.hpp"

namespace cfr {

namespace {

constexpr double fp32_bytes = 4;

std::int64_t blocks(std::int64_t rows, std::int64_t block_rows) {
  return (rows + block_rows - 1) / block_rows;
}

// Rows of block `index` when `rows` rows are cut into blocks of `block_rows`.
double rows_of(std::int64_t rows, std::int64_t block_rows, std::int64_t index) {
  return static_cast<double>(std::min(block_rows, rows - index * block_rows));
}

void require_valid(const AttentionProblem& problem, const L2Config& l2) {
  if (problem.batch <= 0 || problem.heads <= 0 || problem.seq_len <= 0 || problem.head_dim <= 0) {
    throw std::invalid_argument("attention problem dimensions must be positive");
  }
  if (!(l2.bytes >= 0) || l2.partitions < 1) {
    throw std::invalid_argument(
        fmt::format("L2 of {} bytes in {} partitions is not a cache", l2.bytes, l2.partitions));
  }
}

void require_valid(const LaunchGeometry& geometry, std::string_view launch) {
  if (!geometry.tile.tiled() || geometry.resident_ctas_per_sm < 1 || geometry.sm_count < 1) {
    throw std::invalid_argument(fmt::format(
        "{}: needs a tile (Br {}, Bc {}), resident CTAs per SM ({}) and SMs ({}) above 0", launch,
        geometry.tile.br, geometry.tile.bc, geometry.resident_ctas_per_sm, geometry.sm_count));
  }
}

// The row blocks one head's CTAs own, in dispatch order, and the number of
// stream tiles each reads: `stream_tiles(block)`.
template <typename StreamTiles>
std::vector<std::int64_t> dispatch_order(std::int64_t row_blocks, bool causal,
                                         CausalBlockOrder order, StreamTiles stream_tiles) {
  std::vector<std::int64_t> owned(static_cast<std::size_t>(row_blocks));
  for (std::int64_t x = 0; x < row_blocks; ++x) owned[static_cast<std::size_t>(x)] = x;
  if (causal && order == CausalBlockOrder::heaviest_first) {
    std::stable_sort(owned.begin(), owned.end(), [&](std::int64_t a, std::int64_t b) {
      return stream_tiles(a) > stream_tiles(b);
    });
  }
  return owned;
}

// The launch's CTAs, one per (row block, head), `make(head, block)` building
// each; the grid order decides which index runs fastest. The list repeats
// every K/V head (its `group` query heads) with the group moved on by one.
// Blocks fastest, a K/V head's CTAs are consecutive: the launch states them
// once and dispatches them once per K/V head (StreamedLaunch::cycles). Heads
// fastest, it lists every CTA, the blocks one after another, and repeats
// every `group` CTAs where the blocks are alike (the simulation checks:
// StreamedLaunch::period_ctas); the CTAs that run together read the same
// tile of different heads (StreamedLaunch::tile_major). Heads fastest in
// groups of `kv_group` K/V heads, it lists one group's CTAs and dispatches
// them once per group.
template <typename MakeCta>
void set_grid(StreamedLaunch& launch, std::int64_t heads, std::int64_t group,
              const std::vector<std::int64_t>& owned, GridOrder order, MakeCta make,
              std::int64_t kv_group = 0) {
  const bool blocks_first = order[0] == GridAxis::q_blocks || order[0] == GridAxis::kv_blocks;
  launch.ctas.clear();
  if (blocks_first) {
    launch.ctas.reserve(static_cast<std::size_t>(group) * owned.size());
    for (std::int64_t head = 0; head < group; ++head) {
      for (std::int64_t block : owned) launch.ctas.push_back(make(head, block));
    }
    launch.cycles = heads / group;
    launch.period_ctas = std::ssize(launch.ctas);
    launch.period_groups = 1;
  } else {
    const std::int64_t kv_heads = heads / group;
    const std::int64_t listed_kv = kv_group > 0 && kv_group < kv_heads ? kv_group : kv_heads;
    if (kv_heads % listed_kv != 0) {
      throw std::invalid_argument(fmt::format("{}: {} K/V heads do not split in groups of {}",
                                              launch.name, kv_heads, listed_kv));
    }
    const std::int64_t listed = listed_kv * group;
    launch.ctas.reserve(static_cast<std::size_t>(listed) * owned.size());
    for (std::int64_t block : owned) {
      for (std::int64_t head = 0; head < listed; ++head) launch.ctas.push_back(make(head, block));
    }
    launch.cycles = kv_heads / listed_kv;
    launch.period_ctas = launch.cycles > 1 ? std::ssize(launch.ctas) : group;
    launch.period_groups = launch.cycles > 1 ? listed_kv : 1;
    launch.tile_major = true;
  }
  launch.tile_bytes_period = 1;  // every group's tiles are alike
}

struct Shape {
  std::int64_t n;      // query rows of a head
  std::int64_t heads;  // query heads, batch included
  double row;          // bytes of one row of Q, K, V, O, dO, dQ, dK or dV
  bool causal;
  std::int64_t kv_n = n;   // K/V rows of a head
  std::int64_t group = 1;  // query heads per K/V head: they stream the same tiles
};

Shape shape_of(const AttentionProblem& problem) {
  Shape s{problem.seq_len, problem.heads_total(),
          static_cast<double>(problem.head_dim * element_bytes(problem.dtype)), problem.causal};
  s.kv_n = problem.keys();
  s.group = problem.group();
  return s;
}

// K/V blocks Q block `q_block` needs: all, or those at or left of the
// bottom-right aligned diagonal of its last row.
std::int64_t kv_tiles_for(const Shape& s, TileShape tile, std::int64_t q_block) {
  if (!s.causal) return blocks(s.kv_n, tile.bc);
  const std::int64_t last_key = std::min(s.n, (q_block + 1) * tile.br) - 1 + s.kv_n - s.n;
  return std::min(blocks(s.kv_n, tile.bc), last_key / tile.bc + 1);
}

// One CTA per Q block streaming K/V: the forward, and the backward's dQ pass.
StreamedLaunch q_block_launch(std::string name, const Shape& s, const LaunchGeometry& geometry,
                              double own_read_per_row, double own_write_per_row) {
  const TileShape tile = geometry.tile;
  const auto tiles = [&](std::int64_t q_block) { return kv_tiles_for(s, tile, q_block); };
  const std::vector<std::int64_t> owned =
      dispatch_order(blocks(s.n, tile.br), s.causal, geometry.causal_order, tiles);
  StreamedLaunch launch;
  launch.name = std::move(name);
  launch.groups = s.heads / s.group;
  launch.tiles_per_group = blocks(s.kv_n, tile.bc);
  launch.concurrency = geometry.concurrency();
  launch.tile_bytes = [s, tile](std::int64_t, std::int64_t kv_block) {
    return rows_of(s.kv_n, tile.bc, kv_block) * 2 * s.row;  // K and V
  };
  set_grid(
      launch, s.heads, s.group, owned, geometry.grid_order,
      [&](std::int64_t head, std::int64_t q_block) {
        const double rows = rows_of(s.n, tile.br, q_block);
        return StreamedCta{head / s.group,          0, tiles(q_block), 1, rows * own_read_per_row,
                           rows * own_write_per_row};
      },
      geometry.kv_heads_per_group);
  return launch;
}

// The Q block of stream tile `tile` of a K/V head's stream (kv_block_launch).
// Square: tile i is Q block i. GQA: the stream runs from the last Q block
// down, the group's G query heads within each (tile t: Q block Tr - 1 - t / G
// of head t % G), as fa2_bwd's loop does, so a CTA's range starts at tile 0.
std::int64_t q_block_of_tile(const Shape& s, std::int64_t q_blocks, std::int64_t tile) {
  return s.group > 1 ? q_blocks - 1 - tile / s.group : tile;
}

// dK/dV: one CTA per K/V block of a K/V head streaming the Q blocks whose
// last row reaches its first row (all of them when not causal): Q, dO, LSE
// and D per step. Under GQA it streams them for every query head of its
// group, G tiles per Q block (q_block_of_tile), and dK, dV sum over the group.
// Why down: the causal CTAs of a K/V head skip different numbers of Q blocks;
// started together, they walk the shared tiles in step from the last block
// down, where from the first block up CTA j trails CTA 0 by 2G·j steps
// (Bc = 2 Br), and the tiles in between outgrow the L2 G times sooner than
// without GQA (docs/model.md §2.4).
StreamedLaunch kv_block_launch(const Shape& s, const LaunchGeometry& geometry) {
  const TileShape tile = geometry.tile;
  const std::int64_t q_blocks = blocks(s.n, tile.br);
  const auto first_q_block = [&](std::int64_t kv_block) {
    return s.causal ? kv_block * tile.bc / tile.br : 0;
  };
  const auto tiles = [&](std::int64_t kv_block) { return q_blocks - first_q_block(kv_block); };
  const std::vector<std::int64_t> owned =
      dispatch_order(blocks(s.n, tile.bc), s.causal, geometry.causal_order, tiles);
  StreamedLaunch launch;
  launch.name = "dk_dv";
  launch.groups = s.heads / s.group;
  launch.tiles_per_group = q_blocks * s.group;
  launch.concurrency = geometry.concurrency();
  launch.tile_bytes = [s, tile, q_blocks](std::int64_t, std::int64_t q_tile) {
    return rows_of(s.n, tile.br, q_block_of_tile(s, q_blocks, q_tile)) *
           (2 * s.row + 2 * fp32_bytes);
  };
  set_grid(
      launch, launch.groups, 1, owned, geometry.grid_order,
      [&](std::int64_t kv_head, std::int64_t kv_block) {
        const double rows = rows_of(s.n, tile.bc, kv_block);
        const std::int64_t first = s.group > 1 ? 0 : first_q_block(kv_block);
        return StreamedCta{kv_head,          first,           tiles(kv_block) * s.group, 1,
                           rows * 2 * s.row, rows * 2 * s.row};
      },
      geometry.kv_heads_per_group);
  return launch;
}

// fa2_bwd's main launch: kv_block_launch's loop, whose stream tiles also
// hold the Q block's fp32 dQ accumulator rows (each CTA's atomics read-modify-
// write them in L2: a miss reads them from DRAM), and whose CTAs each write
// back their share of the accumulator once (its rows times one accumulator
// row of each query head of its group: a K/V head's CTAs together write its
// group's accumulators once), the simulation having no evictions of lines a
// stream writes.
StreamedLaunch kv_block_atomic_launch(const Shape& s, const LaunchGeometry& geometry,
                                      double accumulator_row) {
  StreamedLaunch launch = kv_block_launch(s, geometry);
  const TileShape tile = geometry.tile;
  const std::int64_t q_blocks = blocks(s.n, tile.br);
  launch.name = "dk_dv_dq";
  launch.tile_bytes = [s, tile, q_blocks, accumulator_row](std::int64_t, std::int64_t q_tile) {
    return rows_of(s.n, tile.br, q_block_of_tile(s, q_blocks, q_tile)) *
           (2 * s.row + 2 * fp32_bytes + accumulator_row);
  };
  for (StreamedCta& cta : launch.ctas) {
    const double rows = cta.own_read_bytes / (2 * s.row);  // its K and V rows
    cta.own_write_bytes += rows * static_cast<double>(s.group) * accumulator_row;
  }
  return launch;
}

// A pass that reads `read_per_row` and writes `write_per_row` bytes of every
// row once, in blocks of `block_rows`: nothing is reused.
StreamedLaunch row_pass_launch(std::string name, const Shape& s, std::int64_t block_rows,
                               std::int64_t concurrency, double read_per_row,
                               double write_per_row) {
  StreamedLaunch launch;
  launch.name = std::move(name);
  launch.concurrency = concurrency;
  launch.tile_bytes = [](std::int64_t, std::int64_t) { return 0.0; };
  // A head's blocks, dispatched once per head (StreamedLaunch::cycles); all
  // alike, one block dispatched once per block, where no block is partial.
  const std::int64_t row_blocks = blocks(s.n, block_rows);
  const bool alike = s.n % block_rows == 0;
  for (std::int64_t block = 0; block < (alike ? 1 : row_blocks); ++block) {
    const double rows = rows_of(s.n, block_rows, block);
    launch.ctas.push_back({0, 0, 0, 1, rows * read_per_row, rows * write_per_row});
  }
  launch.groups = 1;
  launch.cycles = alike ? s.heads * row_blocks : s.heads;
  launch.period_ctas = std::ssize(launch.ctas);
  launch.tile_bytes_period = 1;
  return launch;
}

template <typename... Launches>
std::vector<StreamedLaunch> in_order(Launches&&... launches) {
  std::vector<StreamedLaunch> ordered;
  ordered.reserve(sizeof...(launches));
  (ordered.push_back(std::forward<Launches>(launches)), ...);
  return ordered;
}

// The steps a CTA of the launch holds its slot, on average.
std::int64_t mean_cta_steps(const StreamedLaunch& launch) {
  if (launch.ctas.empty()) return 0;
  double steps = 0;
  for (const StreamedCta& cta : launch.ctas) {
    steps += static_cast<double>(std::max<std::int64_t>(1, cta.tiles) * cta.passes);
  }
  return static_cast<std::int64_t>(steps / static_cast<double>(launch.ctas.size()));
}

// The launch simulated under `l2`: its step budget, its shortcuts, and
// drifted, its CTAs' starts spread.
LaunchTraffic simulate_under(StreamedLaunch launch, const L2Config& l2) {
  launch.max_steps = l2.max_steps;
  launch.skip_repeats = l2.skip_repeats;
  if (l2.drifted) launch.stagger_steps = mean_cta_steps(launch);
  return simulate_launch(launch, l2.effective_bytes());
}

void add(DramEstimate& estimate, const LaunchTraffic& traffic) {
  estimate.launches.push_back(
      {traffic.name, traffic.read_bytes(), traffic.written_bytes, traffic.retained_dirty_bytes});
  estimate.read_bytes += traffic.read_bytes();
  estimate.written_bytes += traffic.written_bytes;
  estimate.retained_dirty_bytes += traffic.retained_dirty_bytes;
}

DramEstimate run(std::vector<StreamedLaunch> launches, const L2Config& l2) {
  DramEstimate estimate;
  for (StreamedLaunch& launch : launches) add(estimate, simulate_under(std::move(launch), l2));
  return estimate;
}

// All naive's softmax launch depends on: a row of S holds one score per key,
// whatever the head dim.
struct SoftmaxShape {
  std::int64_t heads;  // query heads, batch included
  std::int64_t n;      // rows of a head, and keys
  bool causal;
  double element;  // bytes of one score
  std::int64_t concurrency;

  friend auto operator<=>(const SoftmaxShape&, const SoftmaxShape&) = default;
};

// One CTA per row of S, which it reads twice (max and sum, then the
// normalized P); causal rows read only their unmasked keys but write all of
// P (and the row's LSE). Each row is a group of one tile, read in two passes.
StreamedLaunch softmax_launch(const SoftmaxShape& shape) {
  const double score_row = static_cast<double>(shape.n) * shape.element;
  StreamedLaunch softmax;
  softmax.name = "softmax";
  softmax.groups = shape.heads * shape.n;
  softmax.tiles_per_group = 1;
  softmax.concurrency = shape.concurrency;
  softmax.tile_bytes = [shape](std::int64_t row, std::int64_t) {
    const std::int64_t keys = shape.causal ? row % shape.n + 1 : shape.n;
    return static_cast<double>(keys) * shape.element;
  };
  // A row's bytes depend on its place in its head only: the rows repeat
  // every head when causal, every row when not. One period's rows are
  // stated, dispatched once per period (StreamedLaunch::cycles).
  softmax.tile_bytes_period = shape.causal ? shape.n : 1;
  softmax.period_ctas = softmax.tile_bytes_period;
  softmax.period_groups = softmax.tile_bytes_period;
  softmax.cycles = softmax.groups / softmax.period_ctas;
  softmax.ctas.reserve(static_cast<std::size_t>(softmax.period_ctas));
  for (std::int64_t row = 0; row < softmax.period_ctas; ++row) {
    softmax.ctas.push_back({row, 0, 1, 2, 0, score_row + fp32_bytes});
  }
  return softmax;
}

// The softmax launch simulated under `l2`, once per process for each shape
// and L2 (the head dims of a sweep share it: a third of naive's cost each);
// threads that want one being simulated wait for it. Simulated afresh for
// the reference (skip_repeats off). Bounded: starts over past 1024 entries.
LaunchTraffic softmax_traffic(const SoftmaxShape& shape, const L2Config& l2) {
  if (!l2.skip_repeats) return simulate_under(softmax_launch(shape), l2);
  using Key = std::tuple<SoftmaxShape, double, bool, std::int64_t>;
  static SharedMemo<Key, LaunchTraffic> memo(1024);
  return memo.get({shape, l2.effective_bytes(), l2.drifted, l2.max_steps},
                  [&] { return simulate_under(softmax_launch(shape), l2); });
}

}  // namespace

DramEstimate flash_forward_dram(const AttentionProblem& problem, const LaunchGeometry& geometry,
                                const L2Config& l2) {
  require_valid(problem, l2);
  require_valid(geometry, "forward");
  const Shape s = shape_of(problem);
  // Own: Q read; O and LSE written.
  return run(in_order(q_block_launch("forward", s, geometry, s.row, s.row + fp32_bytes)), l2);
}

DramEstimate split_kv_dram(const AttentionProblem& problem, const LaunchGeometry& geometry,
                           int kv_splits, const L2Config& l2) {
  require_valid(problem, l2);
  require_valid(geometry, "forward");
  if (kv_splits < 1) throw std::invalid_argument("split_kv: needs at least one split");
  const Shape s = shape_of(problem);
  const TileShape tile = geometry.tile;
  const std::int64_t group_rows = s.group * s.n;
  const std::int64_t row_blocks = blocks(group_rows, tile.br);
  const std::int64_t tiles = blocks(s.kv_n, tile.bc);
  const std::int64_t tiles_per_split = blocks(tiles, kv_splits);
  const std::int64_t splits = blocks(tiles, tiles_per_split);  // none empty, as the launcher
  StreamedLaunch launch;
  launch.name = "forward";
  launch.groups = s.heads / s.group;
  launch.tiles_per_group = tiles;
  launch.concurrency = geometry.concurrency();
  launch.tile_bytes = [s, tile](std::int64_t, std::int64_t kv_block) {
    return rows_of(s.kv_n, tile.bc, kv_block) * 2 * s.row;  // K and V
  };
  // blockIdx.x: the row block fastest, then the split; y the K/V head, z the
  // batch: one linear order over (K/V head of the batch, split, row block).
  // Own: the block's Q rows read; its O and LSE written, or its split's fp32
  // O / l and LSE (read back by the combining split while in L2).
  const double out_per_row =
      splits > 1 ? static_cast<double>(problem.head_dim + 1) * fp32_bytes : s.row + fp32_bytes;
  // One K/V head's CTAs, dispatched once per K/V head (StreamedLaunch::cycles).
  launch.ctas.reserve(static_cast<std::size_t>(splits * row_blocks));
  for (std::int64_t split = 0; split < splits; ++split) {
    const std::int64_t first = split * tiles_per_split;
    for (std::int64_t block = 0; block < row_blocks; ++block) {
      const double rows = rows_of(group_rows, tile.br, block);
      launch.ctas.push_back({0, first, std::min(tiles_per_split, tiles - first), 1, rows * s.row,
                             rows * out_per_row});
    }
  }
  launch.cycles = launch.groups;
  launch.period_ctas = splits * row_blocks;
  launch.period_groups = 1;
  launch.tile_bytes_period = 1;
  return run(in_order(std::move(launch)), l2);
}

DramEstimate flash_backward_dram(const AttentionProblem& problem, const LaunchGeometry& dk_dv,
                                 const LaunchGeometry& dq, const L2Config& l2) {
  require_valid(problem, l2);
  require_valid(dk_dv, "dk_dv");
  require_valid(dq, "dq");
  if (!problem.square()) {
    throw std::invalid_argument("fa1_bwd's launches: square self-attention only");
  }
  const Shape s = shape_of(problem);
  // D = rowsum(dO * O): O and dO read, D written; nothing is read twice, so
  // only its block order (dQ's tiles) and concurrency matter, for D's writes.
  StreamedLaunch row_dot =
      row_pass_launch("row_dot", s, dq.tile.br, dq.concurrency(), 2 * s.row, fp32_bytes);
  // dQ: own Q, dO, LSE, D read; dQ written; K/V streamed.
  StreamedLaunch dq_pass = q_block_launch("dq", s, dq, 2 * s.row + 2 * fp32_bytes, s.row);
  return run(in_order(std::move(row_dot), kv_block_launch(s, dk_dv), std::move(dq_pass)), l2);
}

DramEstimate fa2_backward_dram(const AttentionProblem& problem, const LaunchGeometry& prepass,
                               const LaunchGeometry& main, const LaunchGeometry& convert,
                               const L2Config& l2) {
  require_valid(problem, l2);
  require_valid(prepass, "prepass");
  require_valid(main, "dk_dv_dq");
  require_valid(convert, "dq_convert");
  if (problem.keys() != problem.seq_len || problem.paged()) {
    throw std::invalid_argument(
        "fa2_bwd's launches: as many keys as queries and a contiguous cache only");
  }
  const Shape s = shape_of(problem);
  const double accumulator_row = static_cast<double>(problem.head_dim) * fp32_bytes;
  // Pre-pass: O and dO read; D and the zeroed accumulator written.
  StreamedLaunch zero = row_pass_launch("prepass", s, prepass.tile.br, prepass.concurrency(),
                                        2 * s.row, fp32_bytes + accumulator_row);
  // Convert: the accumulator read, dQ written.
  StreamedLaunch dq = row_pass_launch("dq_convert", s, convert.tile.br, convert.concurrency(),
                                      accumulator_row, s.row);
  return run(
      in_order(std::move(zero), kv_block_atomic_launch(s, main, accumulator_row), std::move(dq)),
      l2);
}

DramEstimate materialized_dram(const AttentionProblem& problem,
                               const MaterializedGeometry& geometry, const L2Config& l2) {
  require_valid(problem, l2);
  if (geometry.sm_count < 1 || geometry.softmax_ctas_per_sm < 1 || geometry.gemm_ctas_per_sm < 1 ||
      geometry.gemm_block_rows < 1) {
    throw std::invalid_argument("materialized: SMs, CTAs per SM and GEMM block rows must be > 0");
  }
  const Shape s = shape_of(problem);
  const double element = static_cast<double>(element_bytes(problem.dtype));
  const double score_row = static_cast<double>(s.n) * element;  // one row of S or P
  const TileShape gemm_tile{geometry.gemm_block_rows, geometry.gemm_block_rows};
  const LaunchGeometry gemm{gemm_tile, geometry.gemm_ctas_per_sm, geometry.sm_count, blocks_fastest,
                            CausalBlockOrder::natural};
  // The GEMMs compute every block of S whatever the mask: shaped as a
  // non-causal pass of row blocks that each stream the other operand.
  Shape dense = s;
  dense.causal = false;
  // S = Q K^T: own Q rows read, own S rows written, K streamed (as "K/V"
  // tiles of half the bytes: K alone).
  StreamedLaunch scores = q_block_launch("qk_gemm", dense, gemm, s.row, score_row);
  scores.tile_bytes = [dense, gemm_tile](std::int64_t, std::int64_t block) {
    return rows_of(dense.n, gemm_tile.bc, block) * dense.row;
  };
  // O = P V: own P rows read, own O rows written, V streamed.
  StreamedLaunch output = q_block_launch("pv_gemm", dense, gemm, score_row, s.row);
  output.tile_bytes = scores.tile_bytes;

  DramEstimate estimate;
  add(estimate, simulate_under(std::move(scores), l2));
  const SoftmaxShape softmax{
      s.heads, s.n, s.causal, element,
      static_cast<std::int64_t>(geometry.sm_count) * geometry.softmax_ctas_per_sm};
  add(estimate, softmax_traffic(softmax, l2));
  add(estimate, simulate_under(std::move(output), l2));
  return estimate;
}

}  // namespace cfr
