#include "sweep_options.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_checks.hpp"
#include "kernels/kernel_registry.hpp"
#include "roofline/core/axis_values.hpp"
#include "roofline/core/checked_math.hpp"

namespace cfr::app {

namespace {

// Keeps every kernel index (B·H·N·d) well inside 64-bit. Grids are checked per
// kernel, by its launch order (grid_limit_reason): a shape one kernel cannot
// launch is a skipped row of that kernel only.
constexpr std::int64_t max_seq_len = 1 << 22;
constexpr std::int64_t max_batch_or_heads = 1 << 16;
// A sweep of more configurations is a typo (two wide ranges), not a plan: the
// report would not fit in memory and the measurement would take weeks.
constexpr std::int64_t max_configurations = 100000;

template <typename T>
void refuse_repeats(const std::vector<T>& values, std::string_view axis) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw std::invalid_argument(fmt::format("{}: {} appears twice", axis, values[i]));
    }
  }
}

std::vector<std::int64_t> bounded_axis(const std::string& text, std::string_view name,
                                       std::int64_t limit) {
  std::vector<std::int64_t> values = parse_axis_values(text, name);
  for (std::int64_t value : values) {
    if (value > limit) {
      throw std::invalid_argument(fmt::format("{}: {} is larger than {}", name, value, limit));
    }
  }
  refuse_repeats(values, name);
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
  if (options.kernels == all_kernels) {
    for (const KernelDescription* kernel : registered) {
      if (kernel->direction == Direction::forward || options.backward) kernels.push_back(kernel);
    }
    return kernels;
  }
  std::vector<std::string_view> names = split_list(options.kernels, "--kernels");
  refuse_repeats(names, "--kernels");
  for (std::string_view name : names) {
    const auto found = std::find_if(registered.begin(), registered.end(),
                                    [&](const KernelDescription* k) { return k->name == name; });
    if (found == registered.end()) {
      std::vector<std::string_view> known;
      for (const KernelDescription* k : registered) known.push_back(k->name);
      throw std::invalid_argument(fmt::format("--kernels: unknown kernel '{}' (known: {}, {})",
                                              name, fmt::join(known, ", "), all_kernels));
    }
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

std::vector<DType> chosen_dtypes(const SweepOptions& options) {
  std::vector<DType> dtypes;
  for (std::string_view name : split_list(options.dtypes, "--dtype")) {
    const auto dtype = parse_dtype(name);
    if (!dtype) {
      throw std::invalid_argument(
          fmt::format("--dtype: unknown dtype '{}' (fp16, bf16, fp32)", name));
    }
    dtypes.push_back(*dtype);
  }
  std::vector<std::string_view> names;
  for (DType dtype : dtypes) names.push_back(to_string(dtype));
  refuse_repeats(names, "--dtype");
  return dtypes;
}

// The size of the plan and of its largest problem, checked before a single
// point is stored.
void check_plan_size(const std::vector<std::size_t>& axis_sizes,
                     const std::array<std::int64_t, 4>& largest) {
  std::optional<std::int64_t> count = 1;
  for (std::size_t size : axis_sizes) {
    if (count) count = checked_mul(*count, static_cast<std::int64_t>(size));
  }
  if (!count || *count > max_configurations) {
    throw std::invalid_argument(fmt::format(
        "the axes make {} configurations (masks × dtypes × head dims × batches × heads × "
        "sequence lengths × kernels); the cap is {}: narrow an axis",
        count ? fmt::format("{}", *count) : std::string("more than 2^63"), max_configurations));
  }
  const auto [batch, heads, seq_len, head_dim] = largest;
  // The largest buffers anything allocates for one problem: the [B, H, N, d]
  // tensors in fp32 and the backward reference's two [B, H, N, N] fp32 scores.
  if (!checked_product(batch, heads, seq_len, head_dim, 4) ||
      !checked_product(batch, heads, seq_len, seq_len, 8)) {
    throw std::invalid_argument(
        fmt::format("--batch {} × --heads {} × --seq-lens {} (× {} or × --head-dims {}) × 4 bytes "
                    "overflows 64 bits; lower one of them",
                    batch, heads, seq_len, seq_len, head_dim));
  }
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

// The problems of the axes, in the sweep's loop order. `supported`: the head
// dims some kernel has (a head dim none has is a bad value); null: any up to
// 2^20. `kernel_count`: how many kernels each problem is crossed with, for
// the cap on configurations.
std::vector<AttentionProblem> problems_of(const SweepOptions& options,
                                          const std::vector<int>* supported,
                                          std::size_t kernel_count) {
  const auto seq_lens = bounded_axis(options.seq_lens, "--seq-lens", max_seq_len);
  const auto head_dims = bounded_axis(options.head_dims, "--head-dims", 1 << 20);
  for (std::int64_t d : head_dims) {
    if (supported != nullptr &&
        std::find(supported->begin(), supported->end(), d) == supported->end()) {
      throw std::invalid_argument(fmt::format("--head-dims: {} is not supported (supported: {})", d,
                                              fmt::join(*supported, ", ")));
    }
  }
  const auto batches = bounded_axis(options.batch, "--batch", max_batch_or_heads);
  const auto heads = bounded_axis(options.heads, "--heads", max_batch_or_heads);
  const std::vector<DType> dtypes = chosen_dtypes(options);
  std::vector<bool> masks{options.causal};
  if (options.both) masks = {false, true};

  const auto largest = [](const std::vector<std::int64_t>& values) {
    return *std::max_element(values.begin(), values.end());
  };
  check_plan_size({masks.size(), dtypes.size(), head_dims.size(), batches.size(), heads.size(),
                   seq_lens.size(), kernel_count},
                  {largest(batches), largest(heads), largest(seq_lens), largest(head_dims)});
  std::vector<AttentionProblem> problems;
  for (bool causal : masks) {
    for (DType dtype : dtypes) {
      for (std::int64_t d : head_dims) {
        for (std::int64_t b : batches) {
          for (std::int64_t h : heads) {
            for (std::int64_t n : seq_lens) problems.push_back({b, h, n, d, causal, dtype});
          }
        }
      }
    }
  }
  return problems;
}

std::vector<const KernelDescription*> every_kernel() {
  std::vector<const KernelDescription*> kernels;
  for (const KernelDescription& kernel : kernel_catalog) kernels.push_back(&kernel);
  return kernels;
}

}  // namespace

void add_axis_options(CLI::App& command, SweepOptions& o, const std::string& head_dims_help) {
  command
      .add_option("--seq-lens", o.seq_lens,
                  "sequence lengths: a list and/or ranges: 1024:16384:x2, 64:256:+64, 1:8 "
                  "(step +1), [pow2]10:14 (2^10..2^14)")
      ->type_name("LIST")
      ->capture_default_str();
  command.add_option("--head-dims", o.head_dims, head_dims_help)
      ->type_name("LIST")
      ->capture_default_str();
  command.add_option("--batch", o.batch, "batch sizes")->type_name("LIST")->capture_default_str();
  command.add_option("--heads", o.heads, "head counts")->type_name("LIST")->capture_default_str();
  auto* causal = command.add_flag("--causal", o.causal, "causal mask only");
  auto* no_causal = command.add_flag("--no-causal", o.no_causal, "no mask (the default)");
  auto* both = command.add_flag("--both", o.both, "both causal and not");
  causal->excludes(no_causal)->excludes(both);
  no_causal->excludes(both);
  command.add_option("--dtype,--dtypes", o.dtypes, "element types: fp16, bf16, fp32 (a list)")
      ->type_name("LIST")
      ->capture_default_str();
}

void add_sweep_options(CLI::App& command, SweepOptions& o) {
  add_axis_options(command, o,
                   fmt::format("head dims ({})", fmt::join(head_dims_of(every_kernel()), ", ")));
  command
      .add_option("--kernels", o.kernels,
                  "kernels from the registry; all: every forward kernel that takes the shape")
      ->type_name("LIST")
      ->capture_default_str();
  command.add_flag("--backward", o.backward, "add the backward kernels");
  command.add_option("--gpu", o.gpu, "ceiling: a GPU table id or 'auto' (the local device)")
      ->type_name("ID")
      ->check(not_empty())
      ->capture_default_str();
  add_gpu_table_option(command, o.gpu_table);
  command
      .add_option("--flop-convention", o.flop_convention,
                  "causal FLOP count: exact (unmasked pairs) or half (dense / 2)")
      ->type_name("NAME")
      ->capture_default_str();
  add_output_option(command, "--json", o.json_path, "write the report JSON");
  add_output_option(command, "--csv", o.csv_path, "write the table as CSV");
  add_output_option(command, "--md", o.md_path, "write the table as Markdown");
}

FlopConvention flop_convention_option(const std::string& text) {
  const auto convention = parse_flop_convention(text);
  if (!convention) {
    throw std::invalid_argument(
        fmt::format("--flop-convention: unknown convention '{}' (exact or half)", text));
  }
  return *convention;
}

std::vector<AttentionProblem> plan_problems(const SweepOptions& options) {
  return problems_of(options, nullptr, 1);
}

SweepPlan plan_sweep(const SweepOptions& options) {
  SweepPlan plan;
  plan.convention = flop_convention_option(options.flop_convention);

  const auto kernels = chosen_kernels(options);
  const std::vector<int> supported = head_dims_of(kernels);
  for (const AttentionProblem& problem : problems_of(options, &supported, kernels.size())) {
    for (const KernelDescription* kernel : kernels) {
      // `all` is every kernel that takes the shape; a kernel named with
      // --kernels gets a skipped row saying why it does not.
      if (options.kernels == all_kernels && shape_reason(*kernel, problem)) continue;
      plan.points.push_back({kernel, problem});
    }
  }
  return plan;
}

}  // namespace cfr::app
