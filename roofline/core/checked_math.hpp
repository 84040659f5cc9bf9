#pragma once

// Products and sums of numbers a user typed (axis values, shapes read from a
// file) in 64-bit integers that say when they overflow instead of wrapping.

#include <cstdint>
#include <optional>

namespace cfr {

inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a·b·c·…, or empty when any partial product overflows.
template <typename... Rest>
std::optional<std::int64_t> checked_product(std::int64_t first, Rest... rest) {
  std::optional<std::int64_t> out = first;
  ((out = out ? checked_mul(*out, static_cast<std::int64_t>(rest)) : std::nullopt), ...);
  return out;
}

}  // namespace cfr
