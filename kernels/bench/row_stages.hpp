#pragma once

// The stages of measuring one row (DeviceSession::run), each to be read and
// tested alone. A row stops at the first stage that skips or fails it:
//   1. resolve: the launchers the row runs on this device, or why it is
//      skipped (no launcher, no code for this device);
//   2. allocate: the problem's inputs and references (kept across the rows of
//      one problem), then the row's own outputs and workspaces, and the
//      buffers and shape each launch is given; skipped when there is no room;
//   3. check: one launch on poisoned outputs, compared with the reference
//      (every row, or a sample where the reference would exceed its budget:
//      docs/checks.md); failed when an output is wrong;
//   4. time: the cold timer over the launch;
//   5. record: the timer's result as the report's Timing;
//   6. measure_energy (sweep --energy only): the board's energy counter around
//      a run of the timed launch, back to back (kernels/measure/board_energy.hpp).
// A kernel of another problem shape (Nq != Nk, kv heads, a paged cache and its
// page table, a workspace that must start zeroed) changes what allocate
// allocates, fills and points the launches at, and which outputs check
// compares over how many elements; resolve, time and record stay as they are.
//
// A CUDA call that fails inside a stage throws measure::CudaError (rule 1 of
// roofline/core/errors.hpp); DeviceSession::run catches it at the row's
// boundary and fails the row with cuda_failure (rule 3).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/bench/attention_bench.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cold_timer.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/tiled_reference.hpp"
#include "roofline/core/errors.hpp"
#include "roofline/model/check_sample.hpp"

namespace cfr::bench {

// 1. Resolve ------------------------------------------------------------------

// The registered kernels and launchers a row runs: the kernel itself and, for
// a backward kernel, the forward that produces its O and LSE.
struct RowLaunchers {
  const kernels::KernelEntry* entry = nullptr;
  const kernels::KernelEntry* forward_entry = nullptr;  // the entry itself, or its forward partner
  const kernels::ForwardKernel* forward = nullptr;
  const kernels::BackwardKernel* backward = nullptr;  // null for a forward row

  // The row calls cuBLAS when its kernel, or the forward partner that feeds
  // it, does its arithmetic through a library GEMM (the naive kernel).
  bool uses_cublas() const;
};

// The launchers of `kernel` on a device of `cc`, or why the row is skipped:
// no launcher registered, or no code for this device (before anything is
// allocated, so such a row is skipped, not failed).
OrReason<RowLaunchers> resolve_row(const KernelDescription& kernel, ComputeCapability cc);

// 2. Allocate -----------------------------------------------------------------

// How many elements each tensor of `problem` has: the one place that knows
// the layout (attention_api.hpp), for the allocations, the memory estimate
// and the check.
struct TensorSizes {
  std::size_t q = 0;    // Q, O, dO, dQ
  std::size_t kv = 0;   // K, V, dK, dV as a contiguous cache
  std::size_t lse = 0;  // one per query row
  // A paged cache: pages per sequence, pages in all (the page table's
  // entries), and the elements of each of the K and V page pools (pages of
  // kv_heads x page_size x head_dim; a last page's rows past kv_len are
  // allocated, never read). 0 for a contiguous cache.
  std::size_t pages_per_sequence = 0;
  std::size_t pages = 0;
  std::size_t paged_kv = 0;
};
TensorSizes tensor_sizes(const AttentionProblem& problem);

// What a problem's checks compare (docs/checks.md): every row, or, where
// the tiled references would spend more than the budget, a sample of rows
// (plan_check_sample, from the problem's seed). A shape the tiled references
// do not take (a head dim above 128) is checked by the obvious ones, every
// row.
struct CheckPlan {
  bool tiled = true;
  std::optional<CheckSample> forward;   // the forward rows' sample
  std::optional<CheckSample> backward;  // the backward rows', for a problem with dO

  friend bool operator==(const CheckPlan&, const CheckPlan&) = default;
};
CheckPlan plan_checks(const AttentionProblem& problem, bool backward, double budget_flops,
                      std::uint64_t seed);

// Bytes a configuration needs on the device (inputs, outputs, workspace, the
// references of the rows `plan` checks and their scratch), to skip what
// cannot fit before allocating anything.
std::size_t device_bytes_needed(const KernelDescription& kernel, const AttentionProblem& problem,
                                const CheckPlan& plan);

// Why `needed` bytes do not fit in `free` (5% is left for cuBLAS and the
// driver); nullopt when they do.
std::optional<std::string> no_room_reason(std::size_t needed, std::size_t free);

// The rows a sample names, on the device (sorted indices; empty buffers
// when every row is checked), as the references and the check take them.
struct SampledRows {
  std::optional<CheckSample> sample;
  measure::DeviceBuffer query_rows, key_rows;

  kernels::ReferenceRows queries() const;
  kernels::ReferenceRows keys() const;
};

// One problem's inputs and reference outputs, shared by every kernel of that
// problem (the inputs come from the seed, so they are the same for each).
// The references hold the checked rows only: [heads, rows, d] compact.
struct ProblemData {
  AttentionProblem problem;
  std::uint64_t seed = 0;
  bool backward = false;
  double check_budget_flops = default_check_budget_flops;
  measure::DeviceBuffer q, k, v, d_o;
  // A paged problem's K/V: k and v scattered into shuffled pages (what the
  // kernels read); k and v stay, contiguous, for the reference.
  kernels::PagedKv pages;
  CheckPlan plan;
  SampledRows forward_rows, backward_rows;
  measure::DeviceBuffer ref_o, ref_lse;          // forward reference, fp32
  measure::DeviceBuffer ref_dq, ref_dk, ref_dv;  // backward reference, fp32
};

// The seed of a problem's inputs: the sweep's seed mixed with its shape (a
// square problem's seed is what it was before the served shapes).
std::uint64_t problem_seed(std::uint64_t seed, const AttentionProblem& problem);

// Whether `data` holds the inputs (and, for a backward row, dO and the
// gradients' references) a row of `problem` and `seed` needs, checked under
// `check_budget_flops`.
bool holds_inputs(const ProblemData& data, const AttentionProblem& problem, std::uint64_t seed,
                  bool backward, double check_budget_flops = default_check_budget_flops);

// Allocates and fills the inputs of data.problem from data.seed (a paged
// problem's pages and table too, and dO for a backward one), without the
// references: what `sweep --profile`'s child launches over. Throws
// measure::CudaError.
void fill_inputs(ProblemData& data, cudaStream_t stream);

// fill_inputs, then the plan of data.check_budget_flops and the references
// of the rows it checks: the tiled references (the obvious ones where the
// tiled do not take the shape); throws measure::CudaError.
void prepare_inputs(ProblemData& data, cudaStream_t stream);

// One row's outputs and workspaces, and what each launch is given.
struct RowBuffers {
  kernels::AttentionShape shape;
  measure::DeviceBuffer o, lse, forward_workspace, workspace, d_q, d_k, d_v;
  kernels::ForwardBuffers forward_io;
  kernels::BackwardBuffers backward_io;
  kernels::LaunchContext forward_context, backward_context;
};

// The outputs and workspaces of a row of `launchers` over `data`; throws
// measure::CudaError when an allocation fails. Each launch reports its own
// words of a failure to `launch_message`.
RowBuffers allocate_row(const RowLaunchers& launchers, const ProblemData& data, cudaStream_t stream,
                        cublasHandle_t cublas, std::string* launch_message);

// 3. Check --------------------------------------------------------------------

// Poisons the outputs, runs the row's launches once (the forward partner
// first, for a backward row) and compares each output with the reference,
// on the sampled rows of a sub-sampled check (gathered first); the record is
// correctness_record's (roofline/report/measured_row.hpp), with the sample, and
// correctness_failure says why a row whose record did not pass fails. Throws
// measure::CudaError.
Correctness check_row(const RowLaunchers& launchers, RowBuffers& buffers, const ProblemData& data,
                      cudaStream_t stream);

// 4. Time and 5. record -------------------------------------------------------

// launch(stream) enqueues the row's work once (measure::time_cold).
using LaunchFunction = std::function<cudaError_t(cudaStream_t)>;

// The launch the cold timer repeats: the row's kernel alone (a backward row
// reuses the O and LSE of its check).
LaunchFunction timed_launch(const RowLaunchers& launchers, const RowBuffers& buffers);

// Times `launch`; throws measure::CudaError naming time_cold.
measure::TimingResult time_row(const LaunchFunction& launch, const measure::TimingOptions& options,
                               cudaStream_t stream);

// The report's record of a timing under `options`.
Timing timing_record(const measure::TimingResult& timing, const measure::TimingOptions& options);

// 6. Measure energy: measure::measure_board_energy over the timed launch
// (kernels/measure/board_energy.hpp, shared with `ceilings --energy`).

// The row a CUDA error stops: failed, named by the call and the runtime's
// words, or by the launch's own words when it gave some (a plugin's
// message); device_lost for a sticky error.
BenchResult cuda_failure(const measure::CudaError& error, std::string_view kernel,
                         const std::string& launch_message);

// Errors that leave the context unusable: nothing after them can run.
bool is_sticky(cudaError_t error);

}  // namespace cfr::bench
