#pragma once

// The built-in kernels as the tool lists and plans them, read from the
// catalog (roofline/model/kernel_catalog.hpp): a test derives its kernel
// counts and lists from here, so a new kernel is the three edits of
// docs/kernels.md and no test to edit.

#include <cstddef>
#include <string>
#include <vector>

#include "roofline/model/kernel_catalog.hpp"

namespace cfr::test {

// In the order of `--list`, `--kernels`' "known:" and a sweep's rows: the
// forward kernels, then the backward ones, each in catalog order.
inline std::vector<const KernelDescription*> builtin_kernels() {
  std::vector<const KernelDescription*> kernels;
  for (const Direction direction : {Direction::forward, Direction::backward}) {
    for (const KernelDescription& kernel : kernel_catalog) {
      if (kernel.direction == direction) kernels.push_back(&kernel);
    }
  }
  return kernels;
}

inline std::vector<std::string> builtin_kernel_names() {
  std::vector<std::string> names;
  for (const KernelDescription* kernel : builtin_kernels()) names.emplace_back(kernel->name);
  return names;
}

inline std::size_t builtin_kernel_count(Direction direction) {
  std::size_t count = 0;
  for (const KernelDescription& kernel : kernel_catalog) count += kernel.direction == direction;
  return count;
}

// The kernels `--kernels all` plans a row of `problem` for: every forward
// kernel (and backward one, with --backward) that takes its shape.
inline std::vector<const KernelDescription*> kernels_planned(const AttentionProblem& problem,
                                                             bool backward) {
  std::vector<const KernelDescription*> planned;
  for (const KernelDescription* kernel : builtin_kernels()) {
    if (kernel->direction == Direction::backward && !backward) continue;
    if (!shape_reason(*kernel, problem)) planned.push_back(kernel);
  }
  return planned;
}

}  // namespace cfr::test
