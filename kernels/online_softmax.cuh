#pragma once

// The softmax pieces the attention kernels share, in the log2 domain: scores
// come multiplied by scale * log2(e) (softmax_scale_log2_of), so each
// exponential is one exp2 (one MUFU.EX2), and the logsumexp goes back to the
// natural log the API promises. Device code.

#include <cmath>

#include "kernels/softmax_constants.hpp"

namespace cfr::kernels {

// The largest of a thread's scores of one row.
template <int count>
__device__ __forceinline__ float max_of(const float (&x)[count]) {
  float largest = x[0];
#pragma unroll
  for (int c = 1; c < count; ++c) largest = fmaxf(largest, x[c]);
  return largest;
}

// The running state of one query row over the K/V blocks: m, the largest
// score so far, and l, the sum of exp2(score - m). A thread that holds part
// of a row keeps its own share of l: every lane of the row applies the same
// rescale factors, so the shares are added once, at the end.
struct OnlineSoftmaxRow {
  float max = -INFINITY;
  float sum = 0.f;

  // One block: `x` holds this thread's scores of the row, `row_block_max`
  // the block's maximum over every lane of the row. Leaves exp2(x - m_new) in
  // x, rescales l and adds their sum, and returns exp2(m_old - m_new), the
  // factor the row's output accumulator must be scaled by.
  template <int count>
  __device__ __forceinline__ float step(float (&x)[count], float row_block_max) {
    const float new_max = fmaxf(max, row_block_max);
    // A row with every score masked so far keeps m = -inf; subtracting 0
    // instead keeps exp2 at 0 rather than NaN.
    const float base = new_max == -INFINITY ? 0.f : new_max;
    const float rescale = exp2f(max - base);
    float block_sum = 0.f;
#pragma unroll
    for (int c = 0; c < count; ++c) {
      x[c] = exp2f(x[c] - base);
      block_sum += x[c];
    }
    sum = sum * rescale + block_sum;
    max = new_max;
    return rescale;
  }
};

// The natural-log logsumexp of a row from its m (log2 units) and its whole l.
__device__ __forceinline__ float natural_lse(float max_log2, float sum) {
  return (max_log2 + log2f(sum)) * ln_2;
}

}  // namespace cfr::kernels
