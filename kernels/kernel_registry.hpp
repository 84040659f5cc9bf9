#pragma once

// The kernels a run can measure, at run time: each entry is a description
// (roofline/model/kernel_catalog.hpp) with its launcher and the architectures its
// code was built for. with_builtin_kernels() makes one from the catalog and
// the launchers kernels/meson.build built; a plugin loader appends its own
// with add(), which copies every string and list of the description into
// storage the registry owns and refuses what breaks a catalog rule.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernels/attention_api.hpp"
#include "roofline/core/compute_capability.hpp"
#include "roofline/model/kernel_catalog.hpp"

namespace cfr::kernels {

using KernelLauncher = std::variant<ForwardKernel, BackwardKernel>;

struct KernelEntry {
  KernelDescription description;  // views into the registry's storage
  KernelLauncher launcher;
  // The architectures its machine code was built for; empty when not known
  // (a library built elsewhere): then only its launch can tell.
  std::vector<CudaArch> compiled_archs;
  std::string origin;  // "built in", or where it was loaded from

  const ForwardKernel* forward() const { return std::get_if<ForwardKernel>(&launcher); }
  const BackwardKernel* backward() const { return std::get_if<BackwardKernel>(&launcher); }

  // Why it cannot run on a device of compute capability `cc`: older than
  // its minimum, or none of its compiled architectures runs there. Empty
  // when it can (or, with no compiled architectures known, may).
  std::optional<std::string> cannot_run_on(ComputeCapability cc) const;
};

class KernelRegistry {
 public:
  KernelRegistry();
  ~KernelRegistry();
  KernelRegistry(KernelRegistry&&) noexcept;
  KernelRegistry& operator=(KernelRegistry&&) noexcept;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The catalog's kernels with the launchers of this build.
  static KernelRegistry with_builtin_kernels();

  // Throws std::invalid_argument with one line naming the kernel for a
  // description that breaks a rule of description_error(), a name already
  // registered, a launcher of the other direction or without a launch
  // function, or a backward kernel whose forward partner is not registered
  // or cannot feed it. References to earlier entries stay valid.
  const KernelEntry& add(const KernelDescription& description, KernelLauncher launcher,
                         std::vector<CudaArch> compiled_archs, std::string origin);

  const KernelEntry* find(std::string_view name) const;
  // The forward kernel that produces a backward kernel's O and LSE.
  const KernelEntry* forward_partner(const KernelEntry& backward) const;
  // In the order they were added.
  std::vector<const KernelEntry*> entries() const;

 private:
  struct Stored;
  std::vector<std::unique_ptr<Stored>> stored_;
};

// The process's registry: the built-in kernels, plus whatever a plugin loader
// adds at start-up, before any command reads it (it is not locked).
KernelRegistry& registry();

// "80,86,90a" -> the architectures; throws std::invalid_argument naming an
// entry that is not one.
std::vector<CudaArch> parse_arch_list(std::string_view text);

}  // namespace cfr::kernels
