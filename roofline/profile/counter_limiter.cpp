#include "roofline/profile/counter_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

std::vector<Stall> top_stalls(const std::vector<Stall>& stalls, std::size_t count) {
  std::vector<Stall> kept;
  double total = 0;
  for (const Stall& stall : stalls) {
    if (stall.warp_cycles < 0) {
      throw std::invalid_argument(
          fmt::format("stall {} has {} warp-cycles", stall.reason, stall.warp_cycles));
    }
    total += stall.warp_cycles;
    kept.push_back(stall);
  }
  if (!(total > 0)) return {};
  for (Stall& stall : kept) stall.share = stall.warp_cycles / total;
  std::stable_sort(kept.begin(), kept.end(),
                   [](const Stall& a, const Stall& b) { return a.warp_cycles > b.warp_cycles; });
  if (kept.size() > count) kept.resize(count);
  return kept;
}

std::string stall_text(const std::vector<Stall>& stalls) {
  std::string text;
  for (const Stall& stall : stalls) {
    text += fmt::format("{}{} {:.0f}%", text.empty() ? "" : "; ", stall.reason,
                        std::round(100 * stall.share));
  }
  return text;
}

Binding binding_limiter(const CounterEvidence& evidence) {
  const Utilization* busiest = nullptr;
  for (const Utilization& u : evidence.resources) {
    if (u.fraction >= binding_fraction && (busiest == nullptr || u.fraction > busiest->fraction)) {
      busiest = &u;
    }
  }
  if (busiest != nullptr) return {busiest->name, busiest->fraction};
  if (evidence.issue_slots >= binding_fraction) return {"issue", evidence.issue_slots};
  if (evidence.stalls.empty()) return {"latency", evidence.no_eligible};
  return {fmt::format("latency ({})", evidence.stalls.front().reason), evidence.no_eligible};
}

}  // namespace cfr
