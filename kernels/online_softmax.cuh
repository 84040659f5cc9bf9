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

// One block's move of a row's running maximum m. Scores come in their own
// units and `scale_log2` takes them to the log2 domain (1 for scores already
// scaled; fa2_mma keeps raw maxima and folds the scale into its exponent's
// FFMA). `base` is the new m in log2 units, what every exponent of the block
// subtracts: 0 for a row with every score masked so far, which keeps exp2 at
// 0 rather than NaN (fa3_wgmma's FMA-pipe share gives under 2^-124 there:
// kernels/exp2_polynomial.hpp). `rescale` = exp2(m_old - m_new) in log2 units, the factor
// the row's sum and output accumulator are scaled by. `exp2` is the kernel's
// own (exp2f, or ex2.approx.ftz).
struct RowMaxStep {
  float max;
  float base;
  float rescale;
};

template <typename Exp2>
__device__ __forceinline__ RowMaxStep row_max_step(float old_max, float block_max, float scale_log2,
                                                   Exp2 exp2) {
  const float new_max = fmaxf(old_max, block_max);
  const float base = new_max == -INFINITY ? 0.f : new_max * scale_log2;
  return {new_max, base, exp2(old_max * scale_log2 - base)};
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
    const RowMaxStep moved =
        row_max_step(max, row_block_max, 1.f, [](float e) { return exp2f(e); });
    float block_sum = 0.f;
#pragma unroll
    for (int c = 0; c < count; ++c) {
      x[c] = exp2f(x[c] - moved.base);
      block_sum += x[c];
    }
    sum = sum * moved.rescale + block_sum;
    max = moved.max;
    return moved.rescale;
  }
};

// The natural-log logsumexp of a row from its m (log2 units) and its whole l.
__device__ __forceinline__ float natural_lse(float max_log2, float sum) {
  return (max_log2 + log2f(sum)) * ln_2;
}

}  // namespace cfr::kernels
