#include "kernels/kernel_registry.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/built_kernels.hpp"

namespace cfr::kernels {

namespace {

// The launcher table (generated from kernels/meson.build) and the catalog,
// checked against each other here, at compile time: every catalog kernel has
// exactly one built launcher of its direction, built for the minimum
// architecture its catalog entry names. The other way round (every line names
// a catalog kernel) is direction_of()'s check in built_kernels.hpp.
constexpr std::string_view built_kernels_problem() {
  for (const KernelDescription& kernel : kernel_catalog) {
    int lines = 0;
    for (const BuiltKernel& built : built_kernels) {
      if (built.name != kernel.name) continue;
      ++lines;
      if (built.min_arch != kernel.min_compute_capability.number()) {
        return "a kernels/meson.build min_arch differs from its catalog entry";
      }
      const bool forward = built.forward != nullptr;
      if (forward != (kernel.direction == Direction::forward)) {
        return "a built launcher's direction differs from its catalog entry";
      }
    }
    if (lines != 1) return "a catalog kernel is not exactly once in kernels/meson.build";
  }
  return {};
}
static_assert(built_kernels_problem().empty(), "kernels/meson.build and the catalog disagree");
static_assert(built_kernels.size() == kernel_catalog.size());

std::string describe(const DescriptionError& error) {
  return fmt::format("kernel '{}': {}", error.kernel, error.problem);
}

std::string arch_names(const std::vector<CudaArch>& archs) {
  std::vector<std::string> names;
  for (const CudaArch& arch : archs) {
    names.push_back(arch.suffix == 0 ? fmt::format("sm_{}", arch.cc.number())
                                     : fmt::format("sm_{}{}", arch.cc.number(), arch.suffix));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::optional<std::string> KernelEntry::cannot_run_on(ComputeCapability cc) const {
  if (auto reason = below_minimum_reason(description, cc)) return reason;
  if (compiled_archs.empty()) return std::nullopt;
  for (const CudaArch& arch : compiled_archs) {
    if (runs_on(arch, cc)) return std::nullopt;
  }
  return fmt::format(
      "{} is not compiled for compute capability {} (this build has it for {}; add the GPU's "
      "architecture to -Dgpu_archs)",
      description.name, to_string(cc), arch_names(compiled_archs));
}

// An entry and the storage its description's views point into. Held through
// unique_ptr, so adding entries never moves it.
struct KernelRegistry::Stored {
  KernelEntry entry;
  std::string name;
  std::string summary;
  std::string forward_partner;
  std::string served_shapes_reason;
  std::vector<int> head_dims;
  std::vector<ConfigRule> configs;
  std::deque<std::string> pass_names;  // a deque: its strings never move
  std::vector<GridLaunch> launches;
};

KernelRegistry::KernelRegistry() = default;
KernelRegistry::~KernelRegistry() = default;
KernelRegistry::KernelRegistry(KernelRegistry&&) noexcept = default;
KernelRegistry& KernelRegistry::operator=(KernelRegistry&&) noexcept = default;

KernelRegistry KernelRegistry::with_builtin_kernels() {
  KernelRegistry registry;
  // Forward kernels first: a backward kernel's partner must be there before it.
  for (Direction direction : {Direction::forward, Direction::backward}) {
    for (const KernelDescription& kernel : kernel_catalog) {
      if (kernel.direction != direction) continue;
      for (const BuiltKernel& built : built_kernels) {
        if (built.name != kernel.name) continue;
        KernelLauncher launcher = built.forward != nullptr ? KernelLauncher(*built.forward)
                                                           : KernelLauncher(*built.backward);
        registry.add(kernel, launcher, parse_arch_list(built.archs), "built in");
      }
    }
  }
  return registry;
}

const KernelEntry& KernelRegistry::add(const KernelDescription& description,
                                       KernelLauncher launcher,
                                       std::vector<CudaArch> compiled_archs, std::string origin) {
  if (const DescriptionError error = description_error(description)) {
    throw std::invalid_argument(describe(error));
  }
  if (const KernelEntry* existing = find(description.name)) {
    throw std::invalid_argument(
        fmt::format("kernel '{}': the name is taken ({})", description.name, existing->origin));
  }
  const bool forward = std::holds_alternative<ForwardKernel>(launcher);
  if (forward != (description.direction == Direction::forward)) {
    throw std::invalid_argument(fmt::format("kernel '{}': a {} kernel with a {} launcher",
                                            description.name, to_string(description.direction),
                                            forward ? "forward" : "backward"));
  }
  const bool launchable = std::visit(
      [](const auto& l) { return l.launch != nullptr && l.workspace_bytes != nullptr; }, launcher);
  if (!launchable) {
    throw std::invalid_argument(
        fmt::format("kernel '{}': its launcher lacks a function", description.name));
  }
  if (description.direction == Direction::backward) {
    const KernelEntry* partner = find(description.forward_partner);
    const std::string_view problem =
        partner_problem(description, partner != nullptr ? &partner->description : nullptr);
    if (!problem.empty()) {
      throw std::invalid_argument(fmt::format("kernel '{}': {} ('{}')", description.name, problem,
                                              description.forward_partner));
    }
  }

  auto stored = std::make_unique<Stored>();
  stored->name = description.name;
  stored->summary = description.summary;
  stored->forward_partner = description.forward_partner;
  stored->served_shapes_reason = description.shapes.served_shapes_reason;
  stored->head_dims.assign(description.head_dims.begin(), description.head_dims.end());
  stored->configs.assign(description.configs.begin(), description.configs.end());
  for (const GridLaunch& launch : description.launches) {
    const std::string& pass = stored->pass_names.emplace_back(launch.pass);
    // The whole launch (causal order, head groups, causal grid), its pass
    // name in the registry's storage.
    GridLaunch& copy = stored->launches.emplace_back(launch);
    copy.pass = pass;
  }
  KernelDescription& owned = stored->entry.description;
  owned = description;
  owned.name = stored->name;
  owned.summary = stored->summary;
  owned.forward_partner = stored->forward_partner;
  owned.shapes.served_shapes_reason = stored->served_shapes_reason;
  owned.head_dims = stored->head_dims;
  owned.configs = stored->configs;
  owned.launches = stored->launches;
  stored->entry.launcher = launcher;
  stored->entry.compiled_archs = std::move(compiled_archs);
  stored->entry.origin = std::move(origin);
  return stored_.emplace_back(std::move(stored))->entry;
}

const KernelEntry* KernelRegistry::find(std::string_view name) const {
  for (const auto& stored : stored_) {
    if (stored->entry.description.name == name) return &stored->entry;
  }
  return nullptr;
}

const KernelEntry* KernelRegistry::forward_partner(const KernelEntry& backward) const {
  if (backward.description.direction != Direction::backward) return nullptr;
  return find(backward.description.forward_partner);
}

std::vector<const KernelEntry*> KernelRegistry::entries() const {
  std::vector<const KernelEntry*> out;
  for (const auto& stored : stored_) out.push_back(&stored->entry);
  return out;
}

KernelRegistry& registry() {
  static KernelRegistry instance = KernelRegistry::with_builtin_kernels();
  return instance;
}

std::vector<CudaArch> parse_arch_list(std::string_view text) {
  std::vector<CudaArch> archs;
  while (!text.empty()) {
    const std::size_t comma = std::min(text.find(','), text.size());
    const std::string_view item = text.substr(0, comma);
    const auto arch = parse_cuda_arch(item);
    if (!arch) throw std::invalid_argument(fmt::format("'{}' is not a CUDA architecture", item));
    archs.push_back(*arch);
    text.remove_prefix(std::min(comma + 1, text.size()));
  }
  return archs;
}

const ForwardKernel* find_forward_kernel(std::string_view name) {
  const KernelEntry* entry = registry().find(name);
  return entry != nullptr ? entry->forward() : nullptr;
}

const BackwardKernel* find_backward_kernel(std::string_view name) {
  const KernelEntry* entry = registry().find(name);
  return entry != nullptr ? entry->backward() : nullptr;
}

}  // namespace cfr::kernels
