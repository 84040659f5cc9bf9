#include "kernels/measure/device_selection.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

namespace cfr::measure {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string machine_has(int device_count) {
  if (device_count <= 0) return "this machine has no CUDA device";
  return "this machine has " + std::to_string(device_count) + " CUDA device" +
         (device_count == 1 ? "" : "s");
}

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

}  // namespace

namespace {

// device_count < 0: the grammar only, no index is checked against a machine.
std::vector<int> parse(std::string_view spec, int device_count) {
  const bool checked = device_count >= 0;
  const std::string_view whole = trim(spec);
  if (whole.empty()) {
    throw std::invalid_argument("--devices is empty (expected a list such as 0,1 or all)");
  }
  if (whole == "all") {
    if (!checked) return {};
    if (device_count <= 0) throw std::invalid_argument("--devices all: " + machine_has(0));
    std::vector<int> all(static_cast<std::size_t>(device_count));
    for (int i = 0; i < device_count; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }

  std::vector<int> devices;
  std::string_view rest = whole;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      throw std::invalid_argument("--devices " + quoted(spec) +
                                  " has an empty item (expected a list such as 0,1 or all)");
    }
    int index = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), index);
    if (error != std::errc{} || end != item.data() + item.size()) {
      throw std::invalid_argument("invalid device id " + quoted(item) + " in --devices " +
                                  quoted(spec) + " (expected a list such as 0,1 or all)");
    }
    if (!checked && index < 0) {
      throw std::invalid_argument("invalid device id " + quoted(item) + " in --devices " +
                                  quoted(spec) + " (a device index is 0 or more)");
    }
    if (checked && (index < 0 || index >= device_count)) {
      throw std::invalid_argument("device " + std::to_string(index) + " does not exist (" +
                                  machine_has(device_count) + ")");
    }
    if (std::find(devices.begin(), devices.end(), index) != devices.end()) {
      throw std::invalid_argument("device " + std::to_string(index) +
                                  " is listed twice in --devices " + quoted(spec));
    }
    devices.push_back(index);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return devices;
}

}  // namespace

std::vector<int> parse_device_list(std::string_view spec, int device_count) {
  return parse(spec, std::max(device_count, 0));
}

void check_device_list(std::string_view spec) {
  parse(spec, -1);
}

}  // namespace cfr::measure
