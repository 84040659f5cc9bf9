// kernels/exp2_polynomial.hpp on the CPU: 2^x for the x <= 0 an online
// softmax computes, against std::exp2, over the whole range and at its edges.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kernels/exp2_polynomial.hpp"

using cfr::kernels::exp2_polynomial;

namespace {
double relative_error(float x) {
  const double exact = std::exp2(static_cast<double>(x));
  return std::abs(static_cast<double>(exp2_polynomial(x)) - exact) / exact;
}
}  // namespace

TEST_CASE("exp2_polynomial is within 7.6e-5 of 2^x on [-125, 0]", "[exp2]") {
  double worst = 0.0;
  double worst_at = 0.0;
  for (int i = 0; i <= 2'000'000; ++i) {
    const float x = -125.f * static_cast<float>(i) / 2'000'000.f;
    const double error = relative_error(x);
    if (error > worst) {
      worst = error;
      worst_at = x;
    }
  }
  INFO("worst relative error " << worst << " at x = " << worst_at);
  CHECK(worst < 7.6e-5);
  // The cubic is minimax, not loose: its worst error is where Remez put it.
  CHECK(worst > 7.0e-5);
}

TEST_CASE("exp2_polynomial holds its bound at every integer and half-integer, where j changes",
          "[exp2]") {
  for (int j = 0; j >= -124; --j) {
    CAPTURE(j);
    CHECK(relative_error(static_cast<float>(j)) < 7.6e-5);
    CHECK(relative_error(static_cast<float>(j) - 0.5f) < 7.6e-5);
    CHECK(relative_error(static_cast<float>(j) + 0.49f) < 7.6e-5);
  }
}

TEST_CASE("exp2_polynomial below -125 is a positive value under 2^-124", "[exp2]") {
  for (const float x : {-std::numeric_limits<float>::infinity(), -1e30f, -200.f, -127.f, -126.5f,
                        -126.f, -125.5f, -125.2f}) {
    CAPTURE(x);
    const float y = exp2_polynomial(x);
    CHECK(y > 0.f);
    CHECK(y < std::ldexp(1.f, -124));
    CHECK(!std::isnan(y));
  }
}

TEST_CASE("exp2_polynomial at 0 is the row maximum's 1 within the bound", "[exp2]") {
  CHECK(std::abs(exp2_polynomial(0.f) - 1.f) < 7.6e-5f);
  CHECK(std::abs(exp2_polynomial(-0.f) - 1.f) < 7.6e-5f);
}
