#include "roofline/core/compute_unit.hpp"

namespace cfr {

std::optional<ComputeUnit> parse_compute_unit(std::string_view text) {
  for (ComputeUnit unit : all_compute_units) {
    if (text == to_string(unit)) return unit;
  }
  return std::nullopt;
}

}  // namespace cfr
