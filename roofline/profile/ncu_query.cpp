#include "roofline/profile/ncu_query.hpp"

#include <cctype>

namespace cfr::ncu {

namespace {

bool is_metric_name(std::string_view word) {
  if (word.find("__") == std::string_view::npos) return false;
  for (char c : word) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

MetricNames parse_query_metrics(std::string_view text) {
  MetricNames names;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || std::isspace(static_cast<unsigned char>(line.front()))) continue;
    std::string_view word = line.substr(0, line.find_first_of(" \t\r"));
    if (const std::size_t dot = word.rfind('.'); dot != std::string_view::npos) {
      word = word.substr(dot + 1);
    }
    if (is_metric_name(word)) names.emplace(word);
  }
  return names;
}

std::string_view metric_base(std::string_view metric) {
  return metric.substr(0, metric.find('.'));
}

bool chip_has(const MetricNames& names, std::string_view metric) {
  return names.find(metric_base(metric)) != names.end();
}

std::optional<std::string> counters_unavailable_reason(std::string_view output) {
  if (output.find("ERR_NVGPUCTRPERM") != std::string_view::npos) {
    return "no permission to read the GPU's performance counters (ncu: ERR_NVGPUCTRPERM; see "
           "NVIDIA's ERR_NVGPUCTRPERM page, or run with the needed privileges)";
  }
  if (output.find("ERR_NVGPUCTRBUSY") != std::string_view::npos ||
      output.find("another profiler") != std::string_view::npos) {
    return "the GPU's performance counters are held by another profiler (ncu: "
           "ERR_NVGPUCTRBUSY)";
  }
  return std::nullopt;
}

}  // namespace cfr::ncu
