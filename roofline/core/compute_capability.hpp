#pragma once

// A GPU's compute capability (what a kernel needs, what a device or a GPU
// table row has) and a CUDA build target ("86", "90a"), with the rule by which
// the CUDA driver runs a build target's machine code on a device.

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace cfr {

struct ComputeCapability {
  int major = 0;
  int minor = 0;

  // 80 for 8.0, 120 for 12.0: the number in sm_80 and in __CUDA_ARCH__ / 10.
  constexpr int number() const { return major * 10 + minor; }
  friend constexpr auto operator<=>(ComputeCapability, ComputeCapability) = default;
};

// "8.0" -> {8, 0}; empty for anything else ("8", "8.x", "80").
std::optional<ComputeCapability> parse_compute_capability(std::string_view text);
std::string to_string(ComputeCapability cc);

// One entry of the gpu_archs build option: "80" (sm_80), "90a" (sm_90a, with
// the architecture-specific instructions such as wgmma) or "100f" (family).
struct CudaArch {
  ComputeCapability cc;
  char suffix = 0;  // 0, 'a' or 'f'
};

std::optional<CudaArch> parse_cuda_arch(std::string_view text);

// Whether machine code built for `arch` runs on a device of compute
// capability `device` (the build embeds no PTX, so nothing is JIT-compiled):
// same major version, and a minor no newer than the device's; an 'a' build
// runs only on exactly its own compute capability.
constexpr bool runs_on(CudaArch arch, ComputeCapability device) {
  if (arch.cc.major != device.major || arch.cc.minor > device.minor) return false;
  return arch.suffix != 'a' || arch.cc.minor == device.minor;
}

}  // namespace cfr
