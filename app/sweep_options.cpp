#include "sweep_options.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/kernel_registry.hpp"
#include "roofline/axis_values.hpp"

namespace cfr::app {

namespace {

// Keeps every kernel index (B·H·N·d) well inside 64-bit and grids inside CUDA limits.
constexpr std::int64_t max_seq_len = 1 << 22;
constexpr std::int64_t max_batch_or_heads = 1 << 16;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    out.push_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return out;
}

std::vector<std::int64_t> bounded_axis(const std::string& text, std::string_view name,
                                       std::int64_t limit) {
  std::vector<std::int64_t> values = parse_axis_values(text, name);
  for (std::int64_t value : values) {
    if (value > limit) {
      throw std::invalid_argument(fmt::format("{}: {} is larger than {}", name, value, limit));
    }
  }
  return values;
}

// From the process's registry: the built-in kernels and those of --plugin.
std::vector<const KernelDescription*> registered_kernels() {
  std::vector<const KernelDescription*> registered;
  for (const kernels::KernelEntry* entry : kernels::registry().entries()) {
    registered.push_back(&entry->description);
  }
  return registered;
}

std::vector<const KernelDescription*> chosen_kernels(const SweepOptions& options) {
  const std::vector<const KernelDescription*> registered = registered_kernels();
  std::vector<const KernelDescription*> kernels;
  if (options.kernels.empty()) {
    for (const KernelDescription* kernel : registered) {
      if (kernel->direction == Direction::forward || options.backward) kernels.push_back(kernel);
    }
    return kernels;
  }
  for (const std::string& name : split(options.kernels)) {
    const auto found = std::find_if(registered.begin(), registered.end(),
                                    [&](const KernelDescription* k) { return k->name == name; });
    if (found == registered.end()) {
      std::vector<std::string_view> known;
      for (const KernelDescription* k : registered) known.push_back(k->name);
      throw std::invalid_argument(
          fmt::format("--kernels: unknown kernel '{}' (known: {})", name, fmt::join(known, ", ")));
    }
    if (std::find(kernels.begin(), kernels.end(), *found) == kernels.end())
      kernels.push_back(*found);
  }
  if (options.backward) {
    for (const KernelDescription* kernel : registered) {
      if (kernel->direction == Direction::backward &&
          std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) {
        kernels.push_back(kernel);
      }
    }
  }
  return kernels;
}

// Every head dim of `kernels`, ascending. A head dim some of them lack gives
// those a skipped row; one that none has is a bad value.
std::vector<int> head_dims_of(std::span<const KernelDescription* const> kernels) {
  std::vector<int> head_dims;
  for (const KernelDescription* kernel : kernels) {
    head_dims.insert(head_dims.end(), kernel->head_dims.begin(), kernel->head_dims.end());
  }
  std::sort(head_dims.begin(), head_dims.end());
  head_dims.erase(std::unique(head_dims.begin(), head_dims.end()), head_dims.end());
  return head_dims;
}

std::vector<const KernelDescription*> every_kernel() {
  std::vector<const KernelDescription*> kernels;
  for (const KernelDescription& kernel : kernel_catalog) kernels.push_back(&kernel);
  return kernels;
}

}  // namespace

void add_sweep_options(CLI::App& command, SweepOptions& o) {
  command
      .add_option("--seq-lens", o.seq_lens,
                  "sequence lengths: list and/or ranges, e.g. 1024:16384:x2")
      ->capture_default_str();
  command
      .add_option("--head-dims", o.head_dims,
                  fmt::format("head dims ({})", fmt::join(head_dims_of(every_kernel()), ", ")))
      ->capture_default_str();
  command.add_option("--batch", o.batch, "batch sizes")->capture_default_str();
  command.add_option("--heads", o.heads, "head counts")->capture_default_str();
  auto* causal = command.add_flag("--causal", o.causal, "causal mask only");
  auto* no_causal = command.add_flag("--no-causal", o.no_causal, "no mask (the default)");
  auto* both = command.add_flag("--both", o.both, "both causal and not");
  causal->excludes(no_causal)->excludes(both);
  no_causal->excludes(both);
  command.add_option("--dtype,--dtypes", o.dtypes, "element types: fp16, bf16, fp32 (a list)")
      ->capture_default_str();
  command.add_option("--kernels", o.kernels,
                     "kernels from the registry (default: every forward kernel)");
  command.add_flag("--backward", o.backward, "add the backward kernels");
  command.add_option("--gpu", o.gpu, "ceiling: a GPU table id or 'auto' (the local device)")
      ->capture_default_str();
  command.add_option("--gpu-table", o.gpu_table,
                     "GPU table JSON (default: configs/gpus.json, built in)");
  command
      .add_option("--flop-convention", o.flop_convention,
                  "causal FLOP count: exact (unmasked pairs) or half (dense / 2)")
      ->capture_default_str();
  command.add_option("--json", o.json_path, "write the report JSON to PATH ('-' for stdout)");
  command.add_option("--csv", o.csv_path, "write the table as CSV to PATH ('-' for stdout)");
  command.add_option("--md", o.md_path, "write the table as Markdown to PATH ('-' for stdout)");
}

SweepPlan plan_sweep(const SweepOptions& options) {
  SweepPlan plan;
  const auto convention = parse_flop_convention(options.flop_convention);
  if (!convention) {
    throw std::invalid_argument(fmt::format(
        "--flop-convention: unknown convention '{}' (exact or half)", options.flop_convention));
  }
  plan.convention = *convention;

  const auto kernels = chosen_kernels(options);
  const auto seq_lens = bounded_axis(options.seq_lens, "--seq-lens", max_seq_len);
  const auto head_dims = bounded_axis(options.head_dims, "--head-dims", 1 << 20);
  const std::vector<int> supported = head_dims_of(kernels);
  for (std::int64_t d : head_dims) {
    if (std::find(supported.begin(), supported.end(), d) == supported.end()) {
      throw std::invalid_argument(fmt::format("--head-dims: {} is not supported (supported: {})", d,
                                              fmt::join(supported, ", ")));
    }
  }
  const auto batches = bounded_axis(options.batch, "--batch", max_batch_or_heads);
  const auto heads = bounded_axis(options.heads, "--heads", max_batch_or_heads);

  std::vector<DType> dtypes;
  for (const std::string& name : split(options.dtypes)) {
    const auto dtype = parse_dtype(name);
    if (!dtype) {
      throw std::invalid_argument(
          fmt::format("--dtype: unknown dtype '{}' (fp16, bf16, fp32)", name));
    }
    dtypes.push_back(*dtype);
  }
  std::vector<bool> masks{options.causal};
  if (options.both) masks = {false, true};

  for (bool causal : masks) {
    for (DType dtype : dtypes) {
      for (std::int64_t d : head_dims) {
        for (std::int64_t b : batches) {
          for (std::int64_t h : heads) {
            for (std::int64_t n : seq_lens) {
              for (const KernelDescription* kernel : kernels) {
                plan.points.push_back({kernel, {b, h, n, d, causal, dtype}});
              }
            }
          }
        }
      }
    }
  }
  return plan;
}

}  // namespace cfr::app
