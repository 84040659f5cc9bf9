#include "roofline/report/row_profile.hpp"

namespace cfr {

const ProfileCounter* Profile::counter(std::string_view metric) const {
  for (const ProfileCounter& c : counters) {
    if (c.metric == metric) return &c;
  }
  return nullptr;
}

std::optional<double> Profile::value(std::string_view metric) const {
  const ProfileCounter* c = counter(metric);
  return c != nullptr ? c->value : std::nullopt;
}

}  // namespace cfr
