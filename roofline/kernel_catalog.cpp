#include "kernel_catalog.hpp"

namespace cfr {

std::optional<TrafficModelKind> parse_traffic_model(std::string_view text) {
  for (TrafficModelKind kind : {TrafficModelKind::compulsory, TrafficModelKind::materialized,
                                TrafficModelKind::kv_reload, TrafficModelKind::fa1_backward}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

const KernelDescription* find_kernel(std::string_view name) {
  for (const KernelDescription& kernel : kernel_catalog) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

}  // namespace cfr
