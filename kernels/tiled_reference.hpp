#pragma once

// The checking references the sweep uses at any length: tiled, fp32 SIMT
// products and fp32 sums, memory O(B·H·N·d). The forward is FlashAttention's
// loop (a CTA per block of query rows, K/V tiles through shared memory,
// online softmax); the backward recomputes P per tile from the LSE of a
// forward pass and never holds a [N, N] matrix: dQ by blocks of query rows,
// dK and dV by blocks of key rows (each output row owned by one CTA, no
// atomics). The obvious references of attention_api.hpp (one CTA per row,
// double sums) are the test oracle they are checked against
// (tests/kernels/test_tiled_reference.cpp). Host-only interface.
//
// Either computes every row, or the rows of a sorted list of indices (the
// same list in every head): a sub-sampled check (roofline/model/
// check_sample.hpp). Outputs are fp32 and compact: the r-th listed row of
// head h is row h * count + r. K and V are contiguous, as for the obvious
// references (contiguous_cache).

#include <cuda_runtime_api.h>

#include "kernels/attention_api.hpp"

namespace cfr::kernels {

// Rows of one head: `count` sorted indices on the device, or every row when
// `rows` is null (count is then ignored).
struct ReferenceRows {
  const int* rows = nullptr;
  int count = 0;
};

// Whether the tiled references take `shape`: what the obvious ones take,
// with a head dim of at most 128.
bool tiled_reference_supports(const AttentionShape& shape);

// O [heads, rows, head_dim] and LSE [heads, rows] of the listed query rows.
cudaError_t tiled_reference_forward(const AttentionShape& shape, const void* q, const void* k,
                                    const void* v, float* o, float* lse, ReferenceRows query_rows,
                                    cudaStream_t stream);

// The statistics the backward needs of every query row: LSE and
// D = rowsum(dO ∘ O) with O in fp32 (never stored), [heads, seq_len] each.
cudaError_t tiled_reference_row_stats(const AttentionShape& shape, const void* q, const void* k,
                                      const void* v, const void* d_o, float* lse, float* d_rows,
                                      cudaStream_t stream);

// dQ of the listed query rows, dK and dV of the listed key rows ([kv heads,
// rows, head_dim]); L and D come from tiled_reference_row_stats over every
// query row, in scratch of 2 floats a query row.
cudaError_t tiled_reference_backward(const AttentionShape& shape, const void* q, const void* k,
                                     const void* v, const void* d_o, float* d_q, float* d_k,
                                     float* d_v, ReferenceRows query_rows, ReferenceRows key_rows,
                                     cudaStream_t stream);

}  // namespace cfr::kernels
