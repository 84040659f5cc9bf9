#include "roofline/model/own_byte_count.hpp"

#include <cmath>

#include <fmt/format.h>

namespace cfr {

std::optional<std::string> byte_count_problem(double bytes) {
  if (std::isfinite(bytes) && bytes >= 1) return std::nullopt;
  return fmt::format("{} B is not a byte count (finite and at least 1)", bytes);
}

ByteCount checked_byte_count(const OwnByteCount& count, std::string_view kernel,
                             const AttentionProblem& problem) {
  const ByteCount answer = count.hbm_bytes(problem);
  if (const std::string* why = std::get_if<std::string>(&answer)) {
    return fmt::format("{}: no HBM byte count for this shape: {}", kernel, *why);
  }
  if (const auto problem_with = byte_count_problem(std::get<double>(answer))) {
    return fmt::format("{}: its HBM byte count for this shape, {}", kernel, *problem_with);
  }
  return answer;
}

}  // namespace cfr
