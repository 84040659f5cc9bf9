#pragma once

// 2^x on the FMA pipe, host and device, for the x <= 0 of an online softmax
// (kernels/fa3_wgmma.cuh). The special-function unit's ex2 (MUFU.EX2) does 16
// results a clock on an SM against 128 for an FFMA: at d 64 a tile's
// exponentials take as many clocks as its wgmma (docs/perf-notes.md), so the
// kernel computes a share of them here instead (FlashAttention-4's trick on
// Blackwell). x = j + f with j = round(x) and f in [-1/2, 1/2]; 2^f is a
// cubic, minimax in relative error on that interval (7.5e-5, a sixth of
// fp16's rounding of 4.9e-4, for x in [-125, 0]; tests/kernels/test_exp2_polynomial.cpp),
// and j is added to its exponent field. x is clamped at -126.5 so that j's
// addition cannot wrap the exponent: below -125 (a masked score's -inf
// included) the result is a positive value under 2^-124 rather than 0,
// nothing a row's sum or an fp16 P can see; a NaN score gives that too, where
// the ex2 passes it on (no shape the kernels take has a NaN score). Eight
// FMA-pipe and integer instructions in the SASS (FMNMX, three FADD, three
// FFMA, IMAD) where the ex2 is one MUFU.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/wgmma_layout.hpp"  // CFR_HOST_DEVICE

namespace cfr::kernels {

inline constexpr float exp2_polynomial_lowest = -126.5f;

// Minimax cubic of 2^f on [-1/2, 1/2] (relative error), by the Remez exchange.
inline constexpr float exp2_cubic[4] = {0.9999280571937561f, 0.6932609677314758f,
                                        0.2426111251115799f, 0.0551716685295105f};

CFR_HOST_DEVICE inline std::uint32_t bits_of(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

CFR_HOST_DEVICE inline float float_of(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

CFR_HOST_DEVICE inline float exp2_polynomial(float x) {
  // Adding 1.5 x 2^23 rounds x to an integer (the sum's ulp is 1) and leaves
  // that integer in the sum's low mantissa bits, two's complement.
  constexpr float round_to_integer = 12582912.f;
  x = fmaxf(x, exp2_polynomial_lowest);
  const float shifted = x + round_to_integer;
  const float f = x - (shifted - round_to_integer);
  const float p =
      fmaf(fmaf(fmaf(exp2_cubic[3], f, exp2_cubic[2]), f, exp2_cubic[1]), f, exp2_cubic[0]);
  // The low 9 bits of `shifted` are j mod 512; shifted up by 23 they are j
  // x 2^23 mod 2^32, which adds j to p's exponent field.
  return float_of(bits_of(p) + (bits_of(shifted) << 23));
}

}  // namespace cfr::kernels
