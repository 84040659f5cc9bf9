#pragma once

#include <optional>
#include <string_view>

namespace cfr {

// Element types the kernels read and write. Accumulation precision is a
// property of the kernel (its compute unit), not of the dtype.
enum class DType { fp16, bf16, fp32 };

constexpr int element_bytes(DType dtype) {
  return dtype == DType::fp32 ? 4 : 2;
}

constexpr std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view text);

}  // namespace cfr
