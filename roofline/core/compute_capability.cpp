#include "roofline/core/compute_capability.hpp"

#include <charconv>

#include <fmt/format.h>

namespace cfr {

namespace {

// A whole unsigned decimal number of at most three digits, or empty.
std::optional<int> small_number(std::string_view text) {
  int value = 0;
  if (text.empty() || text.size() > 3) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ComputeCapability> parse_compute_capability(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = small_number(text.substr(0, dot));
  const auto minor = small_number(text.substr(dot + 1));
  if (!major || !minor || *major < 1 || *minor > 9) return std::nullopt;
  return ComputeCapability{*major, *minor};
}

std::string to_string(ComputeCapability cc) {
  return fmt::format("{}.{}", cc.major, cc.minor);
}

std::optional<CudaArch> parse_cuda_arch(std::string_view text) {
  CudaArch arch;
  if (!text.empty() && (text.back() == 'a' || text.back() == 'f')) {
    arch.suffix = text.back();
    text.remove_suffix(1);
  }
  const auto number = small_number(text);
  if (!number || *number < 10) return std::nullopt;
  arch.cc = {*number / 10, *number % 10};
  return arch;
}

}  // namespace cfr
