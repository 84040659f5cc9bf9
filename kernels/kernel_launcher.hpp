#pragma once

// How a kernel's .cu file hands its launcher to the registry. Each file
// defines one `<name>_launcher` object; kernels/meson.build declares it (in
// the generated kernels/built_kernels.hpp, which every kernel .cu file sees
// through kernel_dispatch.cuh) with the type its catalog entry's direction
// asks for, and lists it in `built_kernels`. So a launcher of the wrong
// direction, or a meson line whose name the catalog lacks, does not compile;
// a .cu file that defines no launcher does not link. Internal to kernels/.

#include <cstddef>
#include <string_view>

#include "kernels/attention_api.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr::kernels {

template <Direction>
struct LauncherFor;
template <>
struct LauncherFor<Direction::forward> {
  using type = ForwardKernel;
};
template <>
struct LauncherFor<Direction::backward> {
  using type = BackwardKernel;
};
template <Direction direction>
using Launcher = typename LauncherFor<direction>::type;

// The catalog direction of a built-in kernel. For a name the catalog lacks
// the throw makes it no constant expression: that meson line fails to compile.
constexpr Direction direction_of(std::string_view name) {
  const KernelDescription* kernel = find_kernel(name);
  if (kernel == nullptr)
    throw "kernels/meson.build names a kernel roofline/model/kernel_catalog.hpp lacks";
  return kernel->direction;
}

inline std::size_t no_workspace(const AttentionShape&) {
  return 0;
}

// One line of kernels/meson.build's attention_kernels, as built.
struct BuiltKernel {
  std::string_view name;
  int min_arch = 0;        // the line's min_arch, e.g. 80
  std::string_view archs;  // the gpu_archs its file was compiled for: "80,86,90a"
  const ForwardKernel* forward = nullptr;
  const BackwardKernel* backward = nullptr;

  constexpr BuiltKernel(std::string_view name_, int min_arch_, std::string_view archs_,
                        const ForwardKernel* launcher)
      : name(name_), min_arch(min_arch_), archs(archs_), forward(launcher) {}
  constexpr BuiltKernel(std::string_view name_, int min_arch_, std::string_view archs_,
                        const BackwardKernel* launcher)
      : name(name_), min_arch(min_arch_), archs(archs_), backward(launcher) {}
};

}  // namespace cfr::kernels
