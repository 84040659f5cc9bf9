// The kernels the tool can run, by catalog name. Each entry's launch function
// dispatches (dtype, head_dim) itself through kernel_dispatch.cuh.

#include <array>

#include "kernels/attention_launchers.hpp"
#include "roofline/kernel_catalog.hpp"

namespace cfr::kernels {

std::size_t no_workspace(const AttentionShape&) {
  return 0;
}

namespace {

constexpr std::array forward_kernels{
    ForwardKernel{naive_kernel.name, naive_workspace_bytes, launch_naive},
    ForwardKernel{fa1_scalar_kernel.name, no_workspace, launch_fa1_scalar},
    ForwardKernel{fa1_wmma_kernel.name, no_workspace, launch_fa1_wmma},
};

constexpr std::array backward_kernels{
    BackwardKernel{fa1_backward_kernel.name, fa1_backward_workspace_bytes, launch_fa1_backward},
};

template <typename Kernel, std::size_t count>
const Kernel* find_by_name(const std::array<Kernel, count>& kernels, std::string_view name) {
  for (const Kernel& kernel : kernels) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

}  // namespace

const ForwardKernel* find_forward_kernel(std::string_view name) {
  return find_by_name(forward_kernels, name);
}

const BackwardKernel* find_backward_kernel(std::string_view name) {
  return find_by_name(backward_kernels, name);
}

}  // namespace cfr::kernels
