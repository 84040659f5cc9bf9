#pragma once

// HBM byte models of attention, per tensor, in the element bytes of the
// problem's dtype (LSE and D are fp32). docs/model.md derives each one.

#include <string>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr {

struct TensorBytes {
  std::string tensor;  // "Q", "K", "V", "O", "S", "P", "LSE", "dO", "D", "dQ", "dK", "dV"
  double bytes = 0;
};

struct TrafficEstimate {
  TrafficModelKind model = TrafficModelKind::compulsory;
  double bytes = 0;  // sum of the breakdown
  std::vector<TensorBytes> breakdown;
  double compulsory_bytes = 0;  // the floor for this direction, for comparison
  int kv_splits = 1;            // split_kv: CTAs per group's keys (kv_splits.hpp)
};

// Throws std::invalid_argument for a tiled model given an untiled TileShape,
// for a problem with a non-positive dimension, heads not a multiple of
// kv_heads, a causal mask with more queries than keys, a model that cannot
// read the problem's cache (a backward model and Nk != Nq or a paged cache;
// fa1_backward and GQA; a paged cache and anything but split_kv or
// compulsory), or for `plugin`, which only the kernel can count
// (own_count_traffic).
// kv_splits: how many CTAs split each group's keys (split_kv only).
TrafficEstimate estimate_traffic(const AttentionProblem& problem, Direction direction,
                                 TrafficModelKind model, TileShape tile, int kv_splits = 1);

// A kernel's own count (TrafficModelKind::plugin): `bytes` as the total, no
// per-tensor breakdown, and the compulsory floor of the direction beside it.
// `bytes` was checked (byte_count_problem) by the caller.
TrafficEstimate own_count_traffic(const AttentionProblem& problem, Direction direction,
                                  double bytes);

// The byte models that apply to a kernel whose own model is `own`: the
// compulsory floor of its direction, then its own model (once). The rows'
// traffic.by_model holds the bytes of each.
std::vector<TrafficModelKind> traffic_models_for(TrafficModelKind own);

// K/V rows one query head loads when every Q block of `tile.br` rows streams
// over the Bc-row K/V blocks it needs (all of them, or, causal, those at or
// left of the bottom-right aligned diagonal: row i sees keys up to i + kv_len
// - q_len). Never counts rows past kv_len. Causal needs kv_len >= q_len.
double kv_rows_loaded_per_head(std::int64_t q_len, std::int64_t kv_len, TileShape tile,
                               bool causal);
// Square self-attention: q_len = kv_len = seq_len.
double kv_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal);

// Q rows one head loads when every K/V block of `tile.bc` rows streams over
// the Br-row Q blocks that need it (the backward's dK/dV pass).
double q_rows_loaded_per_head(std::int64_t seq_len, TileShape tile, bool causal);

}  // namespace cfr
