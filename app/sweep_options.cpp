#include "sweep_options.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "builtin_model_presets.hpp"
#include "cli_checks.hpp"
#include "kernels/kernel_registry.hpp"
#include "roofline/core/axis_values.hpp"
#include "roofline/core/checked_math.hpp"
#include "roofline/model/model_presets.hpp"

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
        "K/V heads × lengths × page sizes × kernels); the cap is {}: narrow an axis",
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

// The shape axes: head dims and heads (from --preset or their options),
// K/V heads, (query, key) length pairs, page sizes. 0 K/V heads: as many as
// heads.
struct Shapes {
  std::vector<std::int64_t> head_dims;
  std::vector<std::int64_t> heads;
  std::vector<std::int64_t> kv_heads;
  std::vector<std::pair<std::int64_t, std::int64_t>> lengths;
  std::vector<std::int64_t> page_sizes;
};

bool given(const SweepOptions& options, const char* name) {
  return options.given.count(name) != 0;
}

// The option's value if the command line gave one (empty too), else `fallback`.
std::string or_default(const SweepOptions& options, const char* name, const std::string& value,
                       std::string_view fallback) {
  return given(options, name) ? value : std::string(fallback);
}

std::vector<std::pair<std::int64_t, std::int64_t>> chosen_lengths(const SweepOptions& options) {
  const bool apart = given(options, "--q-lens") || given(options, "--kv-lens");
  if (apart && given(options, "--seq-lens")) {
    throw std::invalid_argument(
        "--seq-lens sets both lengths: give it or --q-lens/--kv-lens, not both");
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> lengths;
  if (!apart) {
    for (std::int64_t n :
         bounded_axis(or_default(options, "--seq-lens", options.seq_lens, default_seq_lens),
                      "--seq-lens", max_seq_len)) {
      lengths.emplace_back(n, n);
    }
    return lengths;
  }
  const auto queries =
      bounded_axis(or_default(options, "--q-lens", options.q_lens, "1"), "--q-lens", max_seq_len);
  if (!given(options, "--kv-lens")) {
    for (std::int64_t q : queries) lengths.emplace_back(q, q);
    return lengths;
  }
  const auto keys = bounded_axis(options.kv_lens, "--kv-lens", max_seq_len);
  if (!checked_mul(static_cast<std::int64_t>(queries.size()),
                   static_cast<std::int64_t>(keys.size()))
           .has_value() ||
      queries.size() * keys.size() > static_cast<std::size_t>(max_configurations)) {
    throw std::invalid_argument(
        fmt::format("--q-lens × --kv-lens make {} × {} length pairs; the cap is {}: narrow an axis",
                    queries.size(), keys.size(), max_configurations));
  }
  for (std::int64_t q : queries) {
    for (std::int64_t kv : keys) lengths.emplace_back(q, kv);
  }
  return lengths;
}

std::vector<std::int64_t> chosen_page_sizes(const SweepOptions& options) {
  std::vector<std::int64_t> sizes;
  if (!given(options, "--page-size")) return {0};
  for (std::string_view item : split_list(options.page_sizes, "--page-size")) {
    std::int64_t size = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), size);
    if (error != std::errc{} || end != item.data() + item.size() || size < 0 ||
        size > max_seq_len || (size & (size - 1)) != 0) {
      throw std::invalid_argument(fmt::format(
          "--page-size: '{}' is not 0 (contiguous) or a power of two up to {}", item, max_seq_len));
    }
    sizes.push_back(size);
  }
  refuse_repeats(sizes, "--page-size");
  return sizes;
}

Shapes chosen_shapes(const SweepOptions& options) {
  Shapes shapes;
  if (given(options, "--preset")) {
    if (given(options, "--heads") || given(options, "--kv-heads") ||
        given(options, "--head-dims")) {
      throw std::invalid_argument(
          fmt::format("--preset {} sets --heads, --kv-heads and --head-dims: give one or the "
                      "other",
                      options.preset));
    }
    const ModelPreset& preset = find_preset(builtin_model_presets(), options.preset);
    shapes.heads = {preset.heads.value};
    shapes.kv_heads = {preset.kv_heads.value};
    shapes.head_dims = {preset.head_dim.value};
  } else {
    shapes.heads = bounded_axis(or_default(options, "--heads", options.heads, default_heads),
                                "--heads", max_batch_or_heads);
    shapes.head_dims =
        bounded_axis(or_default(options, "--head-dims", options.head_dims, default_head_dims),
                     "--head-dims", 1 << 20);
    shapes.kv_heads = {0};
    if (given(options, "--kv-heads")) {
      shapes.kv_heads = bounded_axis(options.kv_heads, "--kv-heads", max_batch_or_heads);
      for (std::int64_t kv : shapes.kv_heads) {
        for (std::int64_t h : shapes.heads) {
          if (h % kv != 0) {
            throw std::invalid_argument(
                fmt::format("--kv-heads: {} does not divide --heads {}", kv, h));
          }
        }
      }
    }
  }
  shapes.lengths = chosen_lengths(options);
  shapes.page_sizes = chosen_page_sizes(options);
  return shapes;
}

// The problems of the axes, in the sweep's loop order. `supported`: the head
// dims some kernel has (a head dim none has is a bad value); null: any up to
// 2^20. `kernel_count`: how many kernels each problem is crossed with, for
// the cap on configurations.
std::vector<AttentionProblem> problems_of(const SweepOptions& options,
                                          const std::vector<int>* supported,
                                          std::size_t kernel_count) {
  std::vector<AttentionProblem> problems;
  const Shapes shapes = chosen_shapes(options);
  const auto& head_dims = shapes.head_dims;
  for (std::int64_t d : head_dims) {
    if (supported != nullptr &&
        std::find(supported->begin(), supported->end(), d) == supported->end()) {
      throw std::invalid_argument(fmt::format("--head-dims: {} is not supported (supported: {})", d,
                                              fmt::join(*supported, ", ")));
    }
  }
  const auto batches = bounded_axis(options.batch, "--batch", max_batch_or_heads);
  const std::vector<DType> dtypes = chosen_dtypes(options);
  std::vector<bool> masks{options.causal};
  if (options.both) masks = {false, true};

  const auto largest = [](const std::vector<std::int64_t>& values) {
    return *std::max_element(values.begin(), values.end());
  };
  std::int64_t longest = 0;
  for (const auto& [q, kv] : shapes.lengths) longest = std::max({longest, q, kv});
  check_plan_size(
      {masks.size(), dtypes.size(), head_dims.size(), batches.size(), shapes.heads.size(),
       shapes.kv_heads.size(), shapes.lengths.size(), shapes.page_sizes.size(), kernel_count},
      {largest(batches), largest(shapes.heads), longest, largest(head_dims)});
  for (bool causal : masks) {
    for (DType dtype : dtypes) {
      for (std::int64_t d : head_dims) {
        for (std::int64_t b : batches) {
          for (std::int64_t h : shapes.heads) {
            for (std::int64_t kv_heads : shapes.kv_heads) {
              for (const auto& [q, kv] : shapes.lengths) {
                for (std::int64_t page_size : shapes.page_sizes) {
                  AttentionProblem problem{b, h, q, d, causal, dtype};
                  problem.kv_len = kv;
                  problem.kv_heads = kv_heads;
                  problem.page_size = page_size;
                  problems.push_back(problem);
                }
              }
            }
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

// Records that `option` was set on the command line.
CLI::Option* noted(CLI::Option* option, SweepOptions& o) {
  const std::string name = option->get_name();
  return option->each([&o, name](const std::string&) { o.given.insert(name); });
}

void add_axis_options(CLI::App& command, SweepOptions& o, const std::string& head_dims_help) {
  command
      .add_option("--seq-lens", o.seq_lens,
                  "sequence lengths, of the queries and the keys alike: a list and/or ranges: "
                  "1024:16384:x2, 64:256:+64, 1:8 (step +1), [pow2]10:14 (2^10..2^14)")
      ->type_name("LIST")
      ->default_str(std::string(default_seq_lens));
  command
      .add_option("--q-lens", o.q_lens,
                  "query tokens, apart from the keys (a list or ranges; 1 where only --kv-lens "
                  "is given)")
      ->type_name("LIST");
  command
      .add_option("--kv-lens", o.kv_lens,
                  "keys (the K/V cache), apart from the queries (each query length where only "
                  "--q-lens is given); a causal mask is bottom-right aligned")
      ->type_name("LIST");
  command.add_option("--head-dims", o.head_dims, head_dims_help)
      ->type_name("LIST")
      ->default_str(std::string(default_head_dims));
  command.add_option("--batch", o.batch, "batch sizes")->type_name("LIST")->capture_default_str();
  command.add_option("--heads", o.heads, "query head counts")
      ->type_name("LIST")
      ->default_str(std::string(default_heads));
  command
      .add_option("--kv-heads", o.kv_heads,
                  "K/V head counts (GQA, MQA), each dividing every --heads (default: as many as "
                  "--heads)")
      ->type_name("LIST");
  command
      .add_option("--page-size", o.page_sizes,
                  "a paged K/V cache of this many tokens a page (powers of two; 0: contiguous, "
                  "the default), pages shuffled")
      ->type_name("LIST");
  command
      .add_option("--preset", o.preset,
                  "a model's heads, K/V heads and head dim (configs/models.json: llama3-8b, ...)")
      ->type_name("MODEL");
  for (const char* name : {"--seq-lens", "--q-lens", "--kv-lens", "--head-dims", "--heads",
                           "--kv-heads", "--page-size", "--preset"}) {
    noted(command.get_option(name), o);
  }
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
  add_output_option(command, "--html", o.html_path,
                    "write one self-contained HTML page of the report (as `report --html`)");
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
