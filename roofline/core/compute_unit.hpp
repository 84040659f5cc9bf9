#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace cfr {

// The hardware unit whose peak a kernel is judged against. A SIMT kernel is
// never measured against the tensor-core roof, and vice versa.
enum class ComputeUnit { fp32_simt, fp16_simt, fp16_tensor, bf16_tensor };

inline constexpr std::array<ComputeUnit, 4> all_compute_units{
    ComputeUnit::fp32_simt, ComputeUnit::fp16_simt, ComputeUnit::fp16_tensor,
    ComputeUnit::bf16_tensor};

constexpr std::string_view to_string(ComputeUnit unit) {
  switch (unit) {
    case ComputeUnit::fp32_simt: return "fp32_simt";
    case ComputeUnit::fp16_simt: return "fp16_simt";
    case ComputeUnit::fp16_tensor: return "fp16_tensor";
    case ComputeUnit::bf16_tensor: return "bf16_tensor";
  }
  return "?";
}

std::optional<ComputeUnit> parse_compute_unit(std::string_view text);

}  // namespace cfr
