#include "roofline/model/traffic_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace cfr {

namespace {

constexpr double fp32_bytes = 4;

std::int64_t blocks(std::int64_t rows, std::int64_t block_rows) {
  return rows / block_rows + (rows % block_rows != 0 ? 1 : 0);
}

// Σ_{i=0}^{n-1} floor((a·i + b) / m) for n, a, b ≥ 0 and m ≥ 1, in O(log m)
// steps (the Euclid-like reduction), exact in 128-bit integers.
__extension__ typedef unsigned __int128 wide;  // GCC and Clang; not ISO C++

double floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b) {
  wide count = static_cast<wide>(n), divisor = static_cast<wide>(m);
  wide slope = static_cast<wide>(a), offset = static_cast<wide>(b), sum = 0;
  while (count > 0) {
    if (slope >= divisor) {
      sum += count * (count - 1) / 2 * (slope / divisor);
      slope %= divisor;
    }
    if (offset >= divisor) {
      sum += count * (offset / divisor);
      offset %= divisor;
    }
    const wide top = slope * count + offset;
    if (top < divisor) break;
    count = top / divisor;
    offset = top % divisor;
    std::swap(divisor, slope);
  }
  return static_cast<double>(sum);
}

class Breakdown {
 public:
  // `heads` query heads and `kv_heads` K/V heads (as many unless GQA).
  Breakdown(TrafficModelKind model, double heads, double kv_heads)
      : heads_(heads), kv_heads_(kv_heads) {
    estimate_.model = model;
  }
  Breakdown(TrafficModelKind model, double heads) : Breakdown(model, heads, heads) {}
  void add(std::string tensor, double bytes_per_head) {
    add_total(std::move(tensor), bytes_per_head * heads_);
  }
  // A tensor of the K/V heads (K, V, dK, dV under GQA): bytes per K/V head.
  void add_per_kv_head(std::string tensor, double bytes_per_kv_head) {
    add_total(std::move(tensor), bytes_per_kv_head * kv_heads_);
  }
  void set_kv_splits(int splits) { estimate_.kv_splits = splits; }
  TrafficEstimate finish(double compulsory_bytes) {
    estimate_.compulsory_bytes = compulsory_bytes;
    return estimate_;
  }

 private:
  void add_total(std::string tensor, double bytes) {
    for (TensorBytes& entry : estimate_.breakdown) {
      if (entry.tensor == tensor) {
        entry.bytes += bytes;
        estimate_.bytes += bytes;
        return;
      }
    }
    estimate_.breakdown.push_back({std::move(tensor), bytes});
    estimate_.bytes += bytes;
  }

  double heads_;
  double kv_heads_;
  TrafficEstimate estimate_;
};

void require_tiled(TileShape tile, TrafficModelKind model) {
  if (!tile.tiled()) {
    throw std::invalid_argument(
        fmt::format("traffic model '{}' needs the kernel's tile (Br, Bc)", to_string(model)));
  }
}

}  // namespace

std::vector<TrafficModelKind> traffic_models_for(TrafficModelKind own) {
  if (own == TrafficModelKind::compulsory) return {own};
  return {TrafficModelKind::compulsory, own};
}

// The causal sums below are sums of floor((a·i + b) / m) over a block index,
// evaluated in closed form: a loop over blocks takes minutes for the shapes a
// report file or a historical table may hold (N = 2^31 is 2^25 blocks per row).
double kv_rows_loaded_per_head(std::int64_t q_len, std::int64_t kv_len, TileShape tile,
                               bool causal) {
  const std::int64_t q_blocks = blocks(q_len, tile.br);
  if (!causal) return static_cast<double>(q_blocks) * static_cast<double>(kv_len);
  // Bottom-right: query row r sees keys up to r + shift. Q block i needs the
  // K/V blocks up to the one holding key (i+1)·br - 1 + shift, so it loads
  // bc·floor(((i+1)·br - 1 + shift) / bc + 1) rows, capped at kv_len. Below
  // block `first_full` that is under kv_len; from it on (the last, ragged
  // block always), kv_len.
  const std::int64_t shift = kv_len - q_len;
  const std::int64_t below_last_kv_block = (blocks(kv_len, tile.bc) - 1) * tile.bc;
  const std::int64_t first_full =
      std::clamp<std::int64_t>((below_last_kv_block - shift) / tile.br, 0, q_blocks - 1);
  const double partial = static_cast<double>(tile.bc) *
                         floor_sum(first_full, tile.bc, tile.br, tile.br + tile.bc - 1 + shift);
  return partial + static_cast<double>(q_blocks - first_full) * static_cast<double>(kv_len);
}

double kv_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  return kv_rows_loaded_per_head(seq_len, seq_len, tile, causal);
}

double q_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  const std::int64_t kv_blocks = blocks(seq_len, tile.bc);
  if (!causal) return static_cast<double>(kv_blocks) * static_cast<double>(seq_len);
  // K/V block j is needed by the Q blocks from the one holding its first row,
  // floor(j·bc / br), to the end: N − br·floor(j·bc / br) rows.
  return static_cast<double>(kv_blocks) * static_cast<double>(seq_len) -
         static_cast<double>(tile.br) * floor_sum(kv_blocks, tile.br, tile.bc, 0);
}

namespace {

// D = rowsum(dO * O): O and dO read, D written.
void add_row_dot_pass(Breakdown& out, double matrix, double n) {
  out.add("O", matrix);
  out.add("dO", matrix);
  out.add("D", n * fp32_bytes);
}

// One CTA per K/V block of a K/V head: K and V once; Q, dO, LSE and D of
// each query head of its group once per K/V block that needs them (q_rows a
// query head in all); dK and dV are the caller's.
void add_kv_block_reads(Breakdown& out, double matrix, double row, double q_rows) {
  out.add_per_kv_head("K", matrix);
  out.add_per_kv_head("V", matrix);
  out.add("Q", q_rows * row);
  out.add("dO", q_rows * row);
  out.add("LSE", q_rows * fp32_bytes);
  out.add("D", q_rows * fp32_bytes);
}

// Why a backward model cannot count `problem`: it has as many keys as
// queries and a contiguous cache (every backward kernel's), and fa1_backward
// as many K/V heads as query heads (fa1_bwd's).
void require_backward_shape(const AttentionProblem& problem, TrafficModelKind model) {
  if (problem.keys() != problem.seq_len || problem.paged()) {
    throw std::invalid_argument(
        "the backward models describe self-attention only (as many keys as queries, a "
        "contiguous cache)");
  }
  if (model == TrafficModelKind::fa1_backward && problem.key_heads() != problem.heads) {
    throw std::invalid_argument(
        "traffic model 'fa1_backward' describes as many K/V heads as query heads");
  }
}

// The backward of self-attention, GQA included: Q, O, dO, dQ, LSE and D are
// per query head, K, V, dK and dV per K/V head.
TrafficEstimate backward_traffic(const AttentionProblem& problem, TrafficModelKind model,
                                 TileShape tile) {
  require_backward_shape(problem, model);
  const double n = static_cast<double>(problem.seq_len);
  const double row = static_cast<double>(problem.head_dim * element_bytes(problem.dtype));
  const double matrix = n * row;  // one [N, d] tensor of one head
  const double heads = static_cast<double>(problem.heads_total());
  const double kv_heads = static_cast<double>(problem.kv_heads_total());
  // Q, O, dO, LSE read and dQ written per query head; K, V read and dK, dV
  // written per K/V head. Square problems keep the one product the committed
  // reports hold, bit for bit past 2^53 bytes too.
  const double floor = problem.square()
                           ? heads * (8 * matrix + n * fp32_bytes)
                           : heads * (4 * matrix + n * fp32_bytes) + kv_heads * (4 * matrix);

  Breakdown out(model, heads, kv_heads);
  if (model == TrafficModelKind::compulsory) {
    out.add("Q", matrix);
    out.add_per_kv_head("K", matrix);
    out.add_per_kv_head("V", matrix);
    for (const char* tensor : {"O", "dO", "dQ"}) out.add(tensor, matrix);
    out.add_per_kv_head("dK", matrix);
    out.add_per_kv_head("dV", matrix);
    out.add("LSE", n * fp32_bytes);
    return out.finish(floor);
  }
  if (!is_backward_model(model)) {
    throw std::invalid_argument(
        fmt::format("traffic model '{}' describes a forward kernel", to_string(model)));
  }
  require_tiled(tile, model);
  const double q_rows = q_rows_loaded_per_head(problem.seq_len, tile, problem.causal);
  if (model == TrafficModelKind::fa2_backward) {
    const double accumulator_row = static_cast<double>(problem.head_dim) * fp32_bytes;
    // Pre-pass per query head: D; the fp32 dQ accumulator zeroed.
    add_row_dot_pass(out, matrix, n);
    out.add("dQ_accum", n * accumulator_row);
    // One CTA per K/V block of a K/V head, and per Q block of a query head of
    // its group it streams an fp32 read-modify-write of that block's dQ
    // accumulator rows (the atomics, in L2); dK and dV, summed over the group
    // in registers, written once.
    add_kv_block_reads(out, matrix, row, q_rows);
    out.add("dQ_accum", 2 * q_rows * accumulator_row);
    out.add_per_kv_head("dK", matrix);
    out.add_per_kv_head("dV", matrix);
    // dQ converted per query head: the accumulator read, dQ written.
    out.add("dQ_accum", n * accumulator_row);
    out.add("dQ", matrix);
    return out.finish(floor);
  }
  const double kv_rows = kv_rows_loaded_per_head(problem.seq_len, tile, problem.causal);
  // Pass 1: D = rowsum(dO * O).
  add_row_dot_pass(out, matrix, n);
  // Pass 2, one CTA per K/V block: its reads; dK and dV written once.
  add_kv_block_reads(out, matrix, row, q_rows);
  out.add("dK", matrix);
  out.add("dV", matrix);
  // Pass 3, one CTA per Q block: Q, dO, LSE, D once; K and V once per Q
  // block that needs them; dQ written once.
  out.add("Q", matrix);
  out.add("dO", matrix);
  out.add("LSE", n * fp32_bytes);
  out.add("D", n * fp32_bytes);
  out.add("K", kv_rows * row);
  out.add("V", kv_rows * row);
  out.add("dQ", matrix);
  return out.finish(floor);
}

// The forward's tensors, as totals over the problem: Q, O and LSE per query
// head, K and V per K/V head, the page table per sequence.
struct ForwardSizes {
  double row;       // one row of d elements
  double q;         // all of Q (and of O)
  double lse;       // all of LSE
  double kv;        // all of K (and of V), each K/V head once
  double table;     // a paged cache's page indices, each once; 0 contiguous
  double q_heads;   // batch x heads
  double kv_heads;  // batch x kv_heads
};

// Each total is a head's bytes times the heads, in that order: the figures of
// square problems come out bit for bit as the committed reports hold them.
ForwardSizes forward_sizes(const AttentionProblem& problem) {
  ForwardSizes s{};
  s.row = static_cast<double>(problem.head_dim * element_bytes(problem.dtype));
  s.q_heads = static_cast<double>(problem.heads_total());
  s.kv_heads = static_cast<double>(problem.kv_heads_total());
  const double queries = static_cast<double>(problem.seq_len);
  s.q = queries * s.row * s.q_heads;
  s.lse = queries * fp32_bytes * s.q_heads;
  s.kv = static_cast<double>(problem.keys()) * s.row * s.kv_heads;
  if (problem.paged()) {
    s.table = static_cast<double>(blocks(problem.keys(), problem.page_size)) * fp32_bytes *
              static_cast<double>(problem.batch);
  }
  return s;
}

void add_table(Breakdown& out, double bytes) {
  if (bytes > 0) out.add("page_table", bytes);
}

}  // namespace

TrafficEstimate estimate_traffic(const AttentionProblem& problem, Direction direction,
                                 TrafficModelKind model, TileShape tile, int kv_splits) {
  if (problem.batch <= 0 || problem.heads <= 0 || problem.seq_len <= 0 || problem.head_dim <= 0 ||
      problem.keys() <= 0 || problem.key_heads() <= 0 || problem.page_size < 0) {
    throw std::invalid_argument("attention problem dimensions must be positive");
  }
  if (problem.heads % problem.key_heads() != 0) {
    throw std::invalid_argument("heads must be a multiple of kv_heads");
  }
  if (problem.causal && problem.seq_len > problem.keys()) {
    throw std::invalid_argument("a causal mask needs kv_len >= seq_len (bottom-right aligned)");
  }
  if (model == TrafficModelKind::plugin) {
    throw std::invalid_argument("traffic model 'plugin' is the kernel's own count");
  }
  if (direction == Direction::backward) return backward_traffic(problem, model, tile);

  const ForwardSizes s = forward_sizes(problem);
  const double floor = 2 * s.q + 2 * s.kv + s.table;  // Q, K, V read; O written
  Breakdown out(model, 1);
  switch (model) {
    case TrafficModelKind::compulsory:
      out.add("Q", s.q);
      out.add("K", s.kv);
      out.add("V", s.kv);
      out.add("O", s.q);
      add_table(out, s.table);
      break;
    case TrafficModelKind::materialized: {
      if (problem.paged()) throw std::invalid_argument("'materialized' reads a contiguous cache");
      const double scores = static_cast<double>(problem.seq_len) *
                            static_cast<double>(problem.keys()) * element_bytes(problem.dtype);
      out.add("Q", s.q);
      out.add("K", s.kv);
      out.add("V", s.kv);
      out.add("O", s.q);
      out.add("S", 2 * scores * s.q_heads);  // written by QK^T, read by softmax
      out.add("P", 2 * scores * s.q_heads);  // written by softmax, read by PV
      out.add("LSE", s.lse);
      break;
    }
    case TrafficModelKind::kv_reload: {
      require_tiled(tile, model);
      if (problem.paged()) throw std::invalid_argument("'kv_reload' reads a contiguous cache");
      // Every query head's Q blocks read their K/V rows, GQA or not.
      const double kv_rows =
          kv_rows_loaded_per_head(problem.seq_len, problem.keys(), tile, problem.causal);
      out.add("Q", s.q);
      out.add("K", kv_rows * s.row * s.q_heads);
      out.add("V", kv_rows * s.row * s.q_heads);
      out.add("O", s.q);
      out.add("LSE", s.lse);
      break;
    }
    case TrafficModelKind::split_kv: {
      require_tiled(tile, model);
      if (kv_splits < 1) throw std::invalid_argument("'split_kv' needs at least one split");
      out.set_kv_splits(kv_splits);
      // A CTA per (split, block of tile.br group rows, K/V head): K and V once
      // per row block, Q once per split, each split's O / l and LSE in fp32
      // written and read back by the combining split.
      const double row_blocks =
          static_cast<double>(blocks(problem.group() * problem.seq_len, tile.br));
      out.add("Q", kv_splits * s.q);
      out.add("K", row_blocks * s.kv);
      out.add("V", row_blocks * s.kv);
      out.add("O", s.q);
      out.add("LSE", s.lse);
      if (kv_splits > 1) {
        const double partial = kv_splits * s.q_heads * static_cast<double>(problem.seq_len) *
                               static_cast<double>(problem.head_dim + 1) * fp32_bytes;
        out.add("O_partial", 2 * partial);
      }
      add_table(out, row_blocks * s.table * s.kv_heads / static_cast<double>(problem.batch));
      break;
    }
    case TrafficModelKind::fa1_backward:
    case TrafficModelKind::fa2_backward:
      throw std::invalid_argument(
          fmt::format("traffic model '{}' describes a backward kernel", to_string(model)));
    case TrafficModelKind::l2_aware:
      throw std::invalid_argument(
          "traffic model 'l2_aware' has no per-tensor breakdown (l2_aware_dram)");
    case TrafficModelKind::plugin: break;  // refused above
  }
  return out.finish(floor);
}

TrafficEstimate own_count_traffic(const AttentionProblem& problem, Direction direction,
                                  double bytes) {
  TrafficEstimate estimate;
  estimate.model = TrafficModelKind::plugin;
  estimate.bytes = bytes;
  estimate.compulsory_bytes =
      estimate_traffic(problem, direction, TrafficModelKind::compulsory, {}).bytes;
  return estimate;
}

}  // namespace cfr
