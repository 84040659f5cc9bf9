#pragma once

// What an output tensor's comparison with the fp32 reference found, and what
// it must meet to pass. The GPU computes the comparison (kernels/
// attention_check.hpp), a peer script computes it in torch; the rule that
// judges it is this one, for both.

#include <cstddef>

#include "roofline/core/dtype.hpp"

namespace cfr {

// A reference that is identically zero (dQ and dK when seq_len = 1: one key,
// so dS = P (dP - D) = 0) has no scale of its own; its errors are then
// absolute, as if the scale were 1 (the inputs are O(1)).
struct CheckResult {
  double rel_l2_err = 0;   // ||out - ref||_2 / ||ref||_2; inf if !all_finite
  double max_abs_err = 0;  // max |out - ref| over finite outputs
  double ref_l2 = 0;       // ||ref||_2; 0: rel_l2_err is the absolute ||out - ref||_2
  double ref_max_abs = 0;  // max |ref|
  bool all_finite = true;  // no NaN or Inf left in out
  std::size_t count = 0;

  // The scale max_abs_err is judged against: max |ref|, or 1 for a zero reference.
  double scale() const { return ref_max_abs > 0 ? ref_max_abs : 1.0; }
};

// What a kernel must meet on each output tensor, by I/O dtype:
//   rel_l2_err <= rel_l2  and  max_abs_err <= max_abs_relative * scale().
// The kernels accumulate in fp32 and read exactly the inputs the reference
// reads, so the error is dominated by rounding in the I/O dtype: the output
// itself (relative 2^-11 for fp16, 2^-8 for bf16), P rounded before the P V
// product (fa1_wmma, naive) and S stored in the dtype (naive, the largest
// error: three roundings). rel_l2 bounds are 5-10x the unit roundoff; max_abs
// leaves room for the worst element. fp32 only sees summation-order
// differences (~1e-6), so 1e-4 still catches any indexing or masking error.
struct Tolerance {
  double rel_l2 = 0;
  double max_abs_relative = 0;
};

constexpr Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::fp16: return {5e-3, 2e-2};
    case DType::bf16: return {2e-2, 8e-2};
    case DType::fp32: return {1e-4, 1e-3};
  }
  return {};
}

inline bool passes(const CheckResult& result, const Tolerance& tolerance) {
  return result.all_finite && result.rel_l2_err <= tolerance.rel_l2 &&
         result.max_abs_err <= tolerance.max_abs_relative * result.scale();
}

}  // namespace cfr
