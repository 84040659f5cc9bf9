#include "roofline/core/sample_validity.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cfr {

std::optional<std::string> unusable_samples_reason(const std::vector<double>& samples_ms,
                                                   const std::optional<std::string>& profiler) {
  const bool any_positive =
      std::any_of(samples_ms.begin(), samples_ms.end(), [](double ms) { return ms > 0; });
  if (any_positive) return std::nullopt;
  const std::string what = samples_ms.empty()
                               ? std::string("no samples")
                               : fmt::format("all {} samples are 0 ms", samples_ms.size());
  if (profiler) {
    return fmt::format("{}: timing under an external profiler ({}) is not a measurement", what,
                       *profiler);
  }
  return what + ": the events around the launches measured nothing";
}

std::optional<std::string> external_profiler(const std::vector<std::string>& environment) {
  for (const std::string& entry : environment) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "CUDA_INJECTION64_PATH" || name.starts_with("NSYS_") ||
        name.starts_with("NV_NSIGHT")) {
      return entry;
    }
  }
  return std::nullopt;
}

}  // namespace cfr
