#pragma once

// The L2-aware DRAM byte model of attention kernels: each launch of a kernel
// is described by its loop structure and launch geometry and run through the
// tile-granular LRU simulation of l2_cache_sim.hpp. docs/model.md
// ("L2-aware DRAM bytes") derives it and lists its limits; its error against
// Nsight Compute on an H200 is tabled in docs/l2-model-errors.md.
//
// The inputs are named, none fitted: the kernel's tile and launch order, its
// concurrency (SMs x resident CTAs per SM), and the L2's size and partition
// count. Every launch starts with a cold L2, as Nsight Compute measures it
// (--cache-control all); writes still in L2 when a launch ends are reported
// apart, not as DRAM traffic of that launch.

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_cache_sim.hpp"

namespace cfr {

// The L2 as the model sees it. A line that SMs of every partition read is
// held once per partition (NVIDIA A100 whitepaper, "A100 L2 cache": "Each L2
// partition localizes and caches data for memory accesses from SMs in the
// GPCs directly connected to the partition"; H100's L2 is built the same way
// and Nsight Compute counts its inter-partition traffic as
// lts__t_sectors_srcunit_ltcfabric), so shared K/V tiles see bytes /
// partitions of capacity.
struct L2Config {
  double bytes = 0;    // cudaDevAttrL2CacheSize when measuring; the GPU table's L2 otherwise
  int partitions = 1;  // 2 on A100, H100 and H200
  // The schedule of the interval's high bound: each launch's resident CTAs
  // start spread over one mean CTA's steps, as CTAs that drifted apart run.
  bool drifted = false;
  // The step budget of each launch's simulation (l2_cache_sim.hpp); the
  // interval's bounds use a smaller one than the point.
  std::int64_t max_steps = max_simulated_steps;
  // Take the simulation's shortcuts (StreamedLaunch::skip_repeats); false
  // runs the reference they equal: every CTA listed, every step simulated.
  bool skip_repeats = true;

  double effective_bytes() const { return bytes / partitions; }
};

// The grid axes fastest first, as the registry states them (GridOrder of
// kernel_description.hpp): the hardware dispatches blockIdx.x fastest. Batch
// and heads are one head index here, so only whether the row blocks or the
// heads come first matters.
inline constexpr GridOrder blocks_fastest{GridAxis::q_blocks, GridAxis::heads, GridAxis::batch};
inline constexpr GridOrder heads_fastest{GridAxis::heads, GridAxis::q_blocks, GridAxis::batch};

// How one tiled launch is dispatched; the integration fills it from the
// kernel's registry entry and the device (or the GPU table).
struct LaunchGeometry {
  TileShape tile;                // Br rows of Q per CTA, Bc rows of K/V per step
  int resident_ctas_per_sm = 1;  // occupancy of this kernel
  int sm_count = 1;
  GridOrder grid_order = blocks_fastest;
  CausalBlockOrder causal_order = CausalBlockOrder::natural;
  // Heads fastest: the K/V heads walked side by side before the next group
  // (GridLaunch::head_groups); 0, all of them.
  std::int64_t kv_heads_per_group = 0;

  std::int64_t concurrency() const {
    return static_cast<std::int64_t>(resident_ctas_per_sm) * sm_count;
  }
};

// The materialized path (naive): S = Q K^T and O = P V through a library
// GEMM, a softmax kernel with one CTA per row of S in between.
struct MaterializedGeometry {
  int sm_count = 1;
  int softmax_ctas_per_sm = 1;  // resident softmax CTAs (256 threads: 8 on sm_90)
  int gemm_ctas_per_sm = 1;     // the GEMM's resident CTAs (cuBLAS's sm_90 kernels: 1)
  int gemm_block_rows = 128;    // output rows per GEMM CTA (cuBLAS's tiles are 64-256)
};

struct LaunchBytes {
  std::string launch;               // "forward", "dk_dv", "softmax", ...
  double read_bytes = 0;            // DRAM reads
  double written_bytes = 0;         // writes evicted to DRAM during the launch
  double retained_dirty_bytes = 0;  // writes still in L2 at the launch's end
};

struct DramEstimate {
  std::vector<LaunchBytes> launches;  // in launch order, each from a cold L2
  double read_bytes = 0;
  double written_bytes = 0;
  double retained_dirty_bytes = 0;

  // What Nsight Compute's dram__bytes_read.sum + dram__bytes_write.sum count.
  double bytes() const { return read_bytes + written_bytes; }
  // Every byte that reaches DRAM sooner or later.
  double eventual_bytes() const { return bytes() + retained_dirty_bytes; }
};

// FA-structured forward (fa1_scalar, fa1_wmma, fa2): one CTA per (Q block,
// query head) reads its Q block, streams the K/V blocks it needs (all, or
// those at or left of the bottom-right aligned diagonal when causal), writes
// O and LSE; the query heads of a K/V head (GQA) stream the same tiles.
DramEstimate flash_forward_dram(const AttentionProblem& problem, const LaunchGeometry& geometry,
                                const L2Config& l2);

// Split-KV decoding (fa2_decode): one CTA per (split of a K/V head's keys,
// block of tile.br of its group rows); the row blocks of a split run side by
// side (blockIdx.x) and stream the same K/V tiles. Own: Q rows read; O and
// LSE written, or with several splits each split's fp32 O / l and LSE, whose
// read back by the combining split the model takes from L2.
DramEstimate split_kv_dram(const AttentionProblem& problem, const LaunchGeometry& geometry,
                           int kv_splits, const L2Config& l2);

// fa1_bwd's three launches: D = rowsum(dO * O); dK/dV with one CTA per K/V
// block streaming the Q blocks that see it (Q, dO, LSE, D); dQ with one CTA
// per Q block streaming K/V. Square self-attention only.
DramEstimate flash_backward_dram(const AttentionProblem& problem, const LaunchGeometry& dk_dv,
                                 const LaunchGeometry& dq, const L2Config& l2);

// fa2_bwd's three launches: a pre-pass per Q block of a query head (O and
// dO read, D and the zeroed fp32 dQ accumulator written); one CTA per K/V
// block of a K/V head streaming the Q blocks that see it, of every query head
// of its group (GQA), Q block by Q block (Q, dO, LSE, D and the block's
// accumulator rows, which its atomics update in L2; each CTA writes back its
// share of the group's accumulators once); dQ converted per query head (the
// accumulator read, dQ written). As many keys as queries, a contiguous cache.
DramEstimate fa2_backward_dram(const AttentionProblem& problem, const LaunchGeometry& prepass,
                               const LaunchGeometry& main, const LaunchGeometry& convert,
                               const L2Config& l2);

// naive's three launches: S = Q K^T (all of S, causal or not), softmax
// (reads the unmasked part of each S row twice, writes all of P), O = P V.
DramEstimate materialized_dram(const AttentionProblem& problem,
                               const MaterializedGeometry& geometry, const L2Config& l2);

// Throws std::invalid_argument for non-positive problem dimensions, an
// untiled geometry, a non-positive SM or CTA count, an L2 of no partitions,
// or a backward problem its launches do not take.

}  // namespace cfr
