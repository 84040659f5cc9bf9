#include "kernel_list.hpp"

#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "roofline/compute_capability.hpp"
#include "roofline/kernel_catalog.hpp"

namespace cfr::app {

namespace {

std::string dtype_names(DTypeSet set) {
  std::vector<std::string_view> names;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp32}) {
    if (set.contains(dtype)) names.push_back(to_string(dtype));
  }
  return fmt::format("{}", fmt::join(names, ","));
}

}  // namespace

std::string kernel_list_text() {
  std::string out = fmt::format("{:<12} {:<9} {:<15} {:<11} {:<7} {:<13} {}\n", "kernel",
                                "direction", "dtypes", "head dims", "min cc", "traffic", "summary");
  for (const KernelDescription& kernel : kernel_catalog) {
    out += fmt::format(
        "{:<12} {:<9} {:<15} {:<11} {:<7} {:<13} {}\n", kernel.name, to_string(kernel.direction),
        dtype_names(kernel.dtypes), fmt::format("{}", fmt::join(kernel.head_dims, ",")),
        to_string(kernel.min_compute_capability), to_string(kernel.traffic), kernel.summary);
  }
  return out;
}

void add_list_flag(CLI::App& command) {
  command.add_flag_callback(
      "--list",
      [] {
        std::cout << kernel_list_text();
        throw CLI::Success();  // main exits 0, as for --help
      },
      "list the kernels --kernels takes, and exit");
}

}  // namespace cfr::app
