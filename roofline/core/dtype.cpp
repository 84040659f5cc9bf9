#include "roofline/core/dtype.hpp"

namespace cfr {

std::optional<DType> parse_dtype(std::string_view text) {
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp32}) {
    if (text == to_string(dtype)) return dtype;
  }
  return std::nullopt;
}

}  // namespace cfr
