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
  Breakdown(TrafficModelKind model, double heads) : heads_(heads) { estimate_.model = model; }
  void add(std::string tensor, double bytes_per_head) {
    const double bytes = bytes_per_head * heads_;
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
  TrafficEstimate finish(double compulsory_bytes) {
    estimate_.compulsory_bytes = compulsory_bytes;
    return estimate_;
  }

 private:
  double heads_;
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
double kv_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  const std::int64_t q_blocks = blocks(seq_len, tile.br);
  if (!causal) return static_cast<double>(q_blocks) * static_cast<double>(seq_len);
  // Q block i needs the K/V blocks up to the one holding its last row, so it
  // loads bc·ceil(min(N, (i+1)·br) / bc) rows, capped at N. Below block
  // `first_full` that is bc·ceil((i+1)·br / bc) < N; from it on, N.
  const std::int64_t below_last_kv_block = (blocks(seq_len, tile.bc) - 1) * tile.bc;
  const std::int64_t first_full = below_last_kv_block / tile.br;
  const double partial =
      static_cast<double>(tile.bc) * floor_sum(first_full, tile.bc, tile.br, tile.br + tile.bc - 1);
  return partial + static_cast<double>(q_blocks - first_full) * static_cast<double>(seq_len);
}

double q_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  const std::int64_t kv_blocks = blocks(seq_len, tile.bc);
  if (!causal) return static_cast<double>(kv_blocks) * static_cast<double>(seq_len);
  // K/V block j is needed by the Q blocks from the one holding its first row,
  // floor(j·bc / br), to the end: N − br·floor(j·bc / br) rows.
  return static_cast<double>(kv_blocks) * static_cast<double>(seq_len) -
         static_cast<double>(tile.br) * floor_sum(kv_blocks, tile.br, tile.bc, 0);
}

TrafficEstimate estimate_traffic(const AttentionProblem& problem, Direction direction,
                                 TrafficModelKind model, TileShape tile) {
  if (problem.batch <= 0 || problem.heads <= 0 || problem.seq_len <= 0 || problem.head_dim <= 0) {
    throw std::invalid_argument("attention problem dimensions must be positive");
  }
  if (model == TrafficModelKind::plugin) {
    throw std::invalid_argument("traffic model 'plugin' is the kernel's own count");
  }
  const double n = static_cast<double>(problem.seq_len);
  const double row = static_cast<double>(problem.head_dim * element_bytes(problem.dtype));
  const double matrix = n * row;  // one [N, d] tensor of one head
  const double heads = static_cast<double>(problem.heads_total());

  const double forward_floor = 4 * matrix;  // Q, K, V read; O written
  // Q, K, V, O, dO, LSE read; dQ, dK, dV written.
  const double backward_floor = 8 * matrix + n * fp32_bytes;
  const double floor = heads * (direction == Direction::forward ? forward_floor : backward_floor);

  Breakdown out(model, heads);
  if (direction == Direction::backward) {
    if (model == TrafficModelKind::compulsory) {
      for (const char* tensor : {"Q", "K", "V", "O", "dO", "dQ", "dK", "dV"})
        out.add(tensor, matrix);
      out.add("LSE", n * fp32_bytes);
      return out.finish(floor);
    }
    if (model != TrafficModelKind::fa1_backward) {
      throw std::invalid_argument(
          fmt::format("traffic model '{}' describes a forward kernel", to_string(model)));
    }
    require_tiled(tile, model);
    const double kv_rows = kv_rows_loaded_per_head(problem.seq_len, tile, problem.causal);
    const double q_rows = q_rows_loaded_per_head(problem.seq_len, tile, problem.causal);
    // Pass 1: D = rowsum(dO * O).
    out.add("O", matrix);
    out.add("dO", matrix);
    out.add("D", n * fp32_bytes);
    // Pass 2, one CTA per K/V block: K and V once, Q, dO, LSE and D once per
    // K/V block that needs them; dK and dV written once.
    out.add("K", matrix);
    out.add("V", matrix);
    out.add("Q", q_rows * row);
    out.add("dO", q_rows * row);
    out.add("LSE", q_rows * fp32_bytes);
    out.add("D", q_rows * fp32_bytes);
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

  switch (model) {
    case TrafficModelKind::compulsory:
      for (const char* tensor : {"Q", "K", "V", "O"}) out.add(tensor, matrix);
      break;
    case TrafficModelKind::materialized: {
      const double scores = n * n * element_bytes(problem.dtype);
      for (const char* tensor : {"Q", "K", "V", "O"}) out.add(tensor, matrix);
      out.add("S", 2 * scores);  // written by QK^T, read by softmax
      out.add("P", 2 * scores);  // written by softmax, read by PV
      out.add("LSE", n * fp32_bytes);
      break;
    }
    case TrafficModelKind::kv_reload: {
      require_tiled(tile, model);
      const double kv_rows = kv_rows_loaded_per_head(problem.seq_len, tile, problem.causal);
      out.add("Q", matrix);
      out.add("K", kv_rows * row);
      out.add("V", kv_rows * row);
      out.add("O", matrix);
      out.add("LSE", n * fp32_bytes);
      break;
    }
    case TrafficModelKind::fa1_backward:
      throw std::invalid_argument("traffic model 'fa1_backward' describes a backward kernel");
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
