#pragma once

// The axes and outputs shared by `model` and `sweep`.

#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "roofline/core/attention_problem.hpp"
#include "roofline/model/flop_model.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/report.hpp"

namespace cfr::app {

// --kernels: every forward kernel of the catalog.
inline constexpr std::string_view all_kernels = "all";

// An axis not given takes its default (default_*); `given` holds the options
// the command line set, so a conflict between --seq-lens and
// --q-lens/--kv-lens, or between --preset and the options it sets, is told
// apart from a default, and an empty value is still refused as one.
inline constexpr std::string_view default_seq_lens = "1024:16384:x2";
inline constexpr std::string_view default_head_dims = "64";
inline constexpr std::string_view default_heads = "8";

struct SweepOptions {
  std::string seq_lens;  // both lengths (default_seq_lens)
  std::string q_lens;    // query tokens; with --kv-lens alone: 1
  std::string kv_lens;   // keys; with --q-lens alone: each query length
  std::string head_dims;
  std::string batch = "1";
  std::string heads;
  std::string kv_heads;    // each a divisor of every --heads; empty: as many as heads
  std::string page_sizes;  // 0 (contiguous) or powers of two; empty: 0
  std::string preset;      // a configs/models.json id: heads, kv_heads, head_dim
  std::set<std::string> given;
  bool causal = false;
  bool no_causal = false;
  bool both = false;
  std::string dtypes = "fp16";
  std::string kernels{
      all_kernels};  // every forward kernel (plus the backward ones with --backward)
  bool backward = false;
  std::string gpu = "auto";
  std::string gpu_table;
  std::string flop_convention = "exact";
  std::string json_path;
  std::string csv_path;
  std::string md_path;
  std::string html_path;  // the HTML page of the report (roofline/html/report_page.hpp)
};

void add_sweep_options(CLI::App& command, SweepOptions& options);

// The axis flags alone (--seq-lens, --head-dims, --batch, --heads, the masks,
// --dtype), for a command that plans problems without our kernels.
void add_axis_options(CLI::App& command, SweepOptions& options, const std::string& head_dims_help);

struct SweepPoint {
  const KernelDescription* kernel;
  AttentionProblem problem;
};

struct SweepPlan {
  std::vector<SweepPoint> points;
  FlopConvention convention = FlopConvention::exact;
  // The kernels --plugin brought, for the report's provenance.
  std::vector<PluginKernelRecord> plugins;
};

// Validates every option; throws std::invalid_argument with one line naming
// the bad value.
SweepPlan plan_sweep(const SweepOptions& options);

// --flop-convention's value; throws std::invalid_argument naming it.
FlopConvention flop_convention_option(const std::string& text);

// The problems of the axis options, in the sweep's loop order (mask, dtype,
// head dim, batch, heads, sequence length), each axis checked as plan_sweep
// checks it, except that any head dim up to 2^20 is one: the problems are
// for kernels that are not ours (`import-samples --plan`).
std::vector<AttentionProblem> plan_problems(const SweepOptions& options);

}  // namespace cfr::app
