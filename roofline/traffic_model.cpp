#include "traffic_model.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

constexpr double fp32_bytes = 4;

std::int64_t blocks(std::int64_t rows, std::int64_t block_rows) {
  return (rows + block_rows - 1) / block_rows;
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

double kv_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  const std::int64_t q_blocks = blocks(seq_len, tile.br);
  if (!causal) return static_cast<double>(q_blocks) * static_cast<double>(seq_len);
  double rows = 0;
  for (std::int64_t i = 0; i < q_blocks; ++i) {
    const std::int64_t last_row = std::min(seq_len, (i + 1) * tile.br) - 1;
    const std::int64_t kv_blocks = last_row / tile.bc + 1;
    rows += static_cast<double>(std::min(seq_len, kv_blocks * tile.bc));
  }
  return rows;
}

double q_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal) {
  const std::int64_t kv_blocks = blocks(seq_len, tile.bc);
  if (!causal) return static_cast<double>(kv_blocks) * static_cast<double>(seq_len);
  double rows = 0;
  for (std::int64_t j = 0; j < kv_blocks; ++j) {
    // The first Q block whose last row reaches this K/V block's first row.
    const std::int64_t first_q_block = (j * tile.bc) / tile.br;
    rows += static_cast<double>(seq_len - first_q_block * tile.br);
  }
  return rows;
}

TrafficEstimate estimate_traffic(const AttentionProblem& problem, Direction direction,
                                 TrafficModelKind model, TileShape tile) {
  if (problem.batch <= 0 || problem.heads <= 0 || problem.seq_len <= 0 || problem.head_dim <= 0) {
    throw std::invalid_argument("attention problem dimensions must be positive");
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
  }
  return out.finish(floor);
}

}  // namespace cfr
