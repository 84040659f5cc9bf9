#pragma once

// How a split-KV decoding launch (fa2_decode, traffic model split_kv) cuts
// the work: a group is (batch entry, K/V head, block of `rows_per_cta` of the
// K/V head's group rows, heads / kv_heads query heads x seq_len tokens), and
// each group's keys, Bc-key tiles, are split across `splits` CTAs. The CUDA
// launcher and the traffic model both call this, so the bytes the model
// charges for the partial outputs are those of the launch that ran.

#include <cstdint>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_description.hpp"

namespace cfr {

struct KvSplitPlan {
  std::int64_t groups = 0;     // CTAs before the split: batch x kv_heads x row blocks
  std::int64_t key_tiles = 0;  // Bc-key tiles of one group
  int splits = 1;              // CTAs per group
};

// The splits: the largest power of two that keeps the grid within
// `ctas_per_sm` x sm_count CTAs and every split at least 4 tiles; 1 once the
// groups alone fill that. ctas_per_sm is 1 for a contiguous cache and 2 for
// a paged one whose page-table reads add a dependent load per tile. On the
// H200 (results/h200/decode-dev/round7-variants.txt, docs/perf-notes.md) one
// CTA per SM was within 1 % of the best split count on contiguous caches of
// 1 GB and more and faster below (a shorter split adds combine work), while
// 16-token pages were 15-20 % slower than the contiguous cache at one CTA per
// SM and within 4 % at two. A paged cache takes the contiguous plan where
// every split's pages fit `page_table_entries` (the kernel config's shared
// copy of them, KernelConfig::page_table_entries): its lookups then wait on
// shared memory, not on global (round 14, docs/perf-notes.md).
KvSplitPlan plan_kv_splits(const AttentionProblem& problem, TileShape tile, int sm_count,
                           int page_table_entries);

}  // namespace cfr
