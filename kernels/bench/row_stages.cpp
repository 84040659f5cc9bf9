#include "kernels/bench/row_stages.hpp"

#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "roofline/report/measured_row.hpp"

namespace cfr::bench {

using kernels::shape_of;
using measure::DeviceBuffer;

// 1. Resolve ------------------------------------------------------------------

bool RowLaunchers::uses_cublas() const {
  return entry->description.arithmetic == ArithmeticPath::library_gemm ||
         forward_entry->description.arithmetic == ArithmeticPath::library_gemm;
}

OrReason<RowLaunchers> resolve_row(const KernelDescription& kernel, ComputeCapability cc) {
  const bool backward = kernel.direction == Direction::backward;
  RowLaunchers row;
  row.entry = kernels::registry().find(kernel.name);
  if (row.entry != nullptr) {
    row.forward_entry = backward ? kernels::registry().forward_partner(*row.entry) : row.entry;
  }
  row.forward = row.forward_entry != nullptr ? row.forward_entry->forward() : nullptr;
  row.backward = backward && row.entry != nullptr ? row.entry->backward() : nullptr;
  if (row.forward == nullptr || (backward && row.backward == nullptr)) {
    return fmt::format("no CUDA launcher registered for {}", kernel.name);
  }
  for (const kernels::KernelEntry* entry : {row.entry, row.forward_entry}) {
    if (auto reason = entry->cannot_run_on(cc)) return std::move(*reason);
  }
  return row;
}

// 2. Allocate -----------------------------------------------------------------

TensorSizes tensor_sizes(const AttentionProblem& p) {
  const auto d = static_cast<std::size_t>(p.head_dim);
  const auto rows = static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
  TensorSizes n;
  n.q = rows * d;
  n.kv = static_cast<std::size_t>(p.batch * p.key_heads() * p.keys()) * d;
  n.lse = rows;
  if (p.paged()) {
    n.pages_per_sequence = static_cast<std::size_t>((p.keys() + p.page_size - 1) / p.page_size);
    n.pages = n.pages_per_sequence * static_cast<std::size_t>(p.batch);
    n.paged_kv = n.pages * static_cast<std::size_t>(p.key_heads() * p.page_size) * d;
  }
  return n;
}

namespace {

std::size_t workspace_bytes(const kernels::KernelEntry* entry, const AttentionProblem& p) {
  if (entry == nullptr) return 0;
  return std::visit([&](const auto& launcher) { return launcher.workspace_bytes(shape_of(p)); },
                    entry->launcher);
}

// The registered entries of a row, found by name whether or not they can
// launch: the estimate is made for rows resolve_row would skip too.
std::pair<const kernels::KernelEntry*, const kernels::KernelEntry*> entries_of(
    const KernelDescription& kernel) {
  const kernels::KernelEntry* entry = kernels::registry().find(kernel.name);
  if (entry == nullptr || kernel.direction == Direction::forward) return {entry, entry};
  return {entry, kernels::registry().forward_partner(*entry)};
}

// Rows of a check per head: the sample's, or all `total`.
std::size_t rows_checked(const std::optional<CheckSample>& sample, std::int64_t CheckSample::*rows,
                         std::int64_t total) {
  return static_cast<std::size_t>(sample ? (*sample).*rows : total);
}

// The references of the rows a check compares, in fp32, with the row lists
// and, for a sample, the outputs' gathered rows in the dtype (e bytes).
std::size_t forward_reference_bytes(const AttentionProblem& p, const CheckPlan& plan,
                                    std::size_t e) {
  const std::size_t rows = static_cast<std::size_t>(p.heads_total()) *
                           rows_checked(plan.forward, &CheckSample::query_rows, p.seq_len);
  const std::size_t d = static_cast<std::size_t>(p.head_dim);
  const std::size_t gathered = plan.forward ? rows * (d * e + 4) + rows * sizeof(int) : 0;
  return rows * (d + 1) * 4 + gathered;
}

std::size_t backward_reference_bytes(const AttentionProblem& p, const CheckPlan& plan,
                                     std::size_t e) {
  const std::size_t d = static_cast<std::size_t>(p.head_dim);
  const std::size_t query_rows = static_cast<std::size_t>(p.heads_total()) *
                                 rows_checked(plan.backward, &CheckSample::query_rows, p.seq_len);
  const std::size_t key_rows = static_cast<std::size_t>(p.kv_heads_total()) *
                               rows_checked(plan.backward, &CheckSample::key_rows, p.keys());
  const std::size_t elements = (query_rows + 2 * key_rows) * d;
  // L and D of every query row: the references' scratch.
  const std::size_t scratch = 2 * tensor_sizes(p).lse * 4;
  const std::size_t gathered =
      plan.backward ? elements * e + (query_rows + key_rows) * sizeof(int) : 0;
  return elements * 4 + scratch + gathered;
}

std::size_t forward_bytes(const KernelDescription& kernel, const AttentionProblem& p,
                          const CheckPlan& plan) {
  const std::size_t e = static_cast<std::size_t>(element_bytes(p.dtype));
  const TensorSizes n = tensor_sizes(p);
  const std::size_t workspace = workspace_bytes(entries_of(kernel).first, p);
  // Q, K, V, O in the dtype (and K, V again in pages with their table); LSE;
  // the references.
  return (2 * n.q + 2 * n.kv + 2 * n.paged_kv) * e + n.pages * sizeof(int) + n.lse * 4 + workspace +
         forward_reference_bytes(p, plan, e);
}

std::size_t backward_bytes(const KernelDescription& kernel, const AttentionProblem& p,
                           const CheckPlan& plan) {
  const std::size_t e = static_cast<std::size_t>(element_bytes(p.dtype));
  const TensorSizes n = tensor_sizes(p);
  const auto [entry, forward] = entries_of(kernel);
  const std::size_t workspace = workspace_bytes(entry, p) + workspace_bytes(forward, p);
  // Q, K, V, O, dO, dQ, dK, dV in the dtype; LSE; the workspaces of the
  // kernel and its forward partner; the problem's forward and backward
  // references. Neither reference holds an [N, N] matrix.
  return (4 * n.q + 4 * n.kv) * e + n.lse * 4 + workspace + forward_reference_bytes(p, plan, e) +
         backward_reference_bytes(p, plan, e);
}

}  // namespace

CheckPlan plan_checks(const AttentionProblem& problem, bool backward, double budget_flops,
                      std::uint64_t seed) {
  CheckPlan plan;
  plan.tiled = kernels::tiled_reference_supports(kernels::contiguous_cache(shape_of(problem)));
  if (!plan.tiled) return plan;
  plan.forward = plan_check_sample(problem, Direction::forward, budget_flops, seed);
  if (backward) plan.backward = plan_check_sample(problem, Direction::backward, budget_flops, seed);
  return plan;
}

std::size_t device_bytes_needed(const KernelDescription& kernel, const AttentionProblem& problem,
                                const CheckPlan& plan) {
  return kernel.direction == Direction::forward ? forward_bytes(kernel, problem, plan)
                                                : backward_bytes(kernel, problem, plan);
}

std::optional<std::string> no_room_reason(std::size_t needed, std::size_t free) {
  if (static_cast<double>(needed) <= 0.95 * static_cast<double>(free)) return std::nullopt;
  return fmt::format("needs {:.2f} GiB of device memory, {:.2f} GiB free", needed / 1073741824.0,
                     free / 1073741824.0);
}

std::uint64_t problem_seed(std::uint64_t seed, const AttentionProblem& p) {
  std::uint64_t h = seed;
  auto mix = [&h](std::int64_t x) { h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001B3ull; };
  for (std::int64_t x : {p.batch, p.heads, p.seq_len, p.head_dim,
                         static_cast<std::int64_t>(p.causal), static_cast<std::int64_t>(p.dtype)}) {
    mix(x);
  }
  if (!p.square()) {
    for (std::int64_t x : {p.keys(), p.key_heads(), p.page_size}) mix(x);
  }
  return h;
}

bool holds_inputs(const ProblemData& data, const AttentionProblem& problem, std::uint64_t seed,
                  bool backward, double check_budget_flops) {
  return data.problem == problem && data.seed == seed && (data.backward || !backward) &&
         data.check_budget_flops == check_budget_flops;
}

void fill_inputs(ProblemData& data, cudaStream_t stream) {
  const AttentionProblem& p = data.problem;
  const TensorSizes n = tensor_sizes(p);
  const auto e = static_cast<std::size_t>(element_bytes(p.dtype));
  data.q = DeviceBuffer(n.q * e);
  data.k = DeviceBuffer(n.kv * e);
  data.v = DeviceBuffer(n.kv * e);
  CFR_CUDA_CHECK(kernels::fill_random(data.q.data(), n.q, p.dtype, data.seed ^ 0x51,
                                      kernels::Distribution::normal, stream));
  CFR_CUDA_CHECK(kernels::fill_random(data.k.data(), n.kv, p.dtype, data.seed ^ 0x4B,
                                      kernels::Distribution::normal, stream));
  CFR_CUDA_CHECK(kernels::fill_random(data.v.data(), n.kv, p.dtype, data.seed ^ 0x56,
                                      kernels::Distribution::normal, stream));
  // The pages' unused rows zero, never read; the contiguous K and V stay for
  // the reference.
  if (p.paged()) {
    data.pages =
        kernels::page_kv(shape_of(p), data.k.data(), data.v.data(), data.seed ^ 0x5047, 0, stream);
  }
  if (data.backward) {
    data.d_o = DeviceBuffer(n.q * e);
    CFR_CUDA_CHECK(kernels::fill_random(data.d_o.data(), n.q, p.dtype, data.seed ^ 0x644F,
                                        kernels::Distribution::normal, stream));
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

kernels::ReferenceRows SampledRows::queries() const {
  if (!sample) return {};
  return {query_rows.as<int>(), static_cast<int>(sample->query_rows)};
}

kernels::ReferenceRows SampledRows::keys() const {
  if (!sample) return {};
  return {key_rows.as<int>(), static_cast<int>(sample->key_rows)};
}

namespace {

SampledRows sampled_rows_of(const AttentionProblem& p, const std::optional<CheckSample>& sample,
                            cudaStream_t stream) {
  SampledRows out;
  out.sample = sample;
  if (!sample) return out;
  out.query_rows = kernels::ints_on_device(sampled_query_rows(p, *sample), stream);
  if (sample->key_rows > 0)
    out.key_rows = kernels::ints_on_device(sampled_key_rows(p, *sample), stream);
  return out;
}

void forward_reference(ProblemData& data, cudaStream_t stream) {
  const AttentionProblem& p = data.problem;
  const kernels::AttentionShape shape = kernels::contiguous_cache(shape_of(p));
  const std::size_t rows = static_cast<std::size_t>(p.heads_total()) *
                           rows_checked(data.plan.forward, &CheckSample::query_rows, p.seq_len);
  data.ref_o = DeviceBuffer(rows * static_cast<std::size_t>(p.head_dim) * 4);
  data.ref_lse = DeviceBuffer(rows * 4);
  float* o = data.ref_o.as<float>();
  float* lse = data.ref_lse.as<float>();
  CFR_CUDA_CHECK(data.plan.tiled ? kernels::tiled_reference_forward(
                                       shape, data.q.data(), data.k.data(), data.v.data(), o, lse,
                                       data.forward_rows.queries(), stream)
                                 : kernels::reference_forward(shape, data.q.data(), data.k.data(),
                                                              data.v.data(), o, lse, stream));
}

void backward_reference(ProblemData& data, cudaStream_t stream) {
  const AttentionProblem& p = data.problem;
  const kernels::AttentionShape shape = kernels::contiguous_cache(shape_of(p));
  const auto d = static_cast<std::size_t>(p.head_dim);
  const std::optional<CheckSample>& sample = data.plan.backward;
  data.ref_dq = DeviceBuffer(static_cast<std::size_t>(p.heads_total()) *
                             rows_checked(sample, &CheckSample::query_rows, p.seq_len) * d * 4);
  const std::size_t kv_bytes = static_cast<std::size_t>(p.kv_heads_total()) *
                               rows_checked(sample, &CheckSample::key_rows, p.keys()) * d * 4;
  data.ref_dk = DeviceBuffer(kv_bytes);
  data.ref_dv = DeviceBuffer(kv_bytes);
  float* d_q = data.ref_dq.as<float>();
  float* d_k = data.ref_dk.as<float>();
  float* d_v = data.ref_dv.as<float>();
  CFR_CUDA_CHECK(
      data.plan.tiled
          ? kernels::tiled_reference_backward(
                shape, data.q.data(), data.k.data(), data.v.data(), data.d_o.data(), d_q, d_k, d_v,
                data.backward_rows.queries(), data.backward_rows.keys(), stream)
          : kernels::reference_backward(shape, data.q.data(), data.k.data(), data.v.data(),
                                        data.d_o.data(), d_q, d_k, d_v, stream));
}

}  // namespace

void prepare_inputs(ProblemData& data, cudaStream_t stream) {
  fill_inputs(data, stream);
  const AttentionProblem& p = data.problem;
  data.plan = plan_checks(p, data.backward, data.check_budget_flops, data.seed);
  data.forward_rows = sampled_rows_of(p, data.plan.forward, stream);
  forward_reference(data, stream);
  if (data.backward) {
    data.backward_rows = sampled_rows_of(p, data.plan.backward, stream);
    backward_reference(data, stream);
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
}

RowBuffers allocate_row(const RowLaunchers& launchers, const ProblemData& data, cudaStream_t stream,
                        cublasHandle_t cublas, std::string* launch_message) {
  const AttentionProblem& p = data.problem;
  const TensorSizes n = tensor_sizes(p);
  const auto e = static_cast<std::size_t>(element_bytes(p.dtype));
  RowBuffers b;
  b.shape = shape_of(p);
  b.o = DeviceBuffer(n.q * e);
  b.lse = DeviceBuffer(n.lse * 4);
  b.forward_workspace =
      measure::zeroed_workspace(launchers.forward->workspace_bytes(b.shape), stream);
  if (launchers.backward != nullptr) {
    b.d_q = DeviceBuffer(n.q * e);
    b.d_k = DeviceBuffer(n.kv * e);
    b.d_v = DeviceBuffer(n.kv * e);
    b.workspace = measure::zeroed_workspace(launchers.backward->workspace_bytes(b.shape), stream);
  }
  b.forward_io = {data.q.data(), data.k.data(), data.v.data(), b.o.data(), b.lse.as<float>()};
  if (p.paged()) data.pages.point(b.forward_io);
  b.forward_context = {stream, cublas, b.forward_workspace.data(), b.forward_workspace.bytes(),
                       launch_message};
  b.backward_io = {data.q.data(),     data.k.data(), data.v.data(), b.o.data(),  data.d_o.data(),
                   b.lse.as<float>(), b.d_q.data(),  b.d_k.data(),  b.d_v.data()};
  b.backward_context = {stream, cublas, b.workspace.data(), b.workspace.bytes(), launch_message};
  return b;
}

// 3. Check --------------------------------------------------------------------

namespace {

// An output of [heads, rows_per_head, width] elements as its check sees it:
// every row, or the rows `rows` lists.
struct CheckedOutput {
  const char* name;
  DType stored;  // the problem's dtype, but for LSE (fp32)
  const void* data;
  std::size_t heads;
  std::int64_t rows_per_head;
  std::int64_t width;
  kernels::ReferenceRows rows;
};

// One output compared with its fp32 reference (of the checked rows only),
// its sampled rows gathered first.
void compare(std::vector<CheckedTensor>& checked, const CheckedOutput& out, const float* reference,
             cudaStream_t stream) {
  const std::int64_t rows = out.rows.rows != nullptr ? out.rows.count : out.rows_per_head;
  const std::size_t count = out.heads * static_cast<std::size_t>(rows * out.width);
  const void* compared = out.data;
  DeviceBuffer gathered;
  if (out.rows.rows != nullptr) {
    gathered = DeviceBuffer(count * static_cast<std::size_t>(element_bytes(out.stored)));
    CFR_CUDA_CHECK(kernels::gather_rows(out.data, gathered.data(), out.stored, out.heads,
                                        static_cast<int>(out.rows_per_head), out.rows.rows,
                                        out.rows.count, static_cast<int>(out.width), stream));
    compared = gathered.data();
  }
  kernels::CheckResult check;
  CFR_CUDA_CHECK(
      kernels::compare_with_reference(compared, out.stored, reference, count, stream, check));
  checked.push_back({out.name, check});
}

}  // namespace

Correctness check_row(const RowLaunchers& launchers, RowBuffers& b, const ProblemData& data,
                      cudaStream_t stream) {
  const AttentionProblem& p = data.problem;
  const auto heads = static_cast<std::size_t>(p.heads_total());
  const auto kv_heads = static_cast<std::size_t>(p.kv_heads_total());
  std::vector<CheckedTensor> checked;
  CFR_CUDA_CHECK(kernels::poison(b.o.data(), b.o.bytes(), stream));
  CFR_CUDA_CHECK(kernels::poison(b.lse.data(), b.lse.bytes(), stream));
  CFR_CUDA_CHECK(launchers.forward->launch(b.shape, b.forward_io, b.forward_context));
  if (launchers.backward == nullptr) {
    const kernels::ReferenceRows rows = data.forward_rows.queries();
    compare(checked, {"O", p.dtype, b.o.data(), heads, p.seq_len, p.head_dim, rows},
            data.ref_o.as<float>(), stream);
    compare(checked, {"LSE", DType::fp32, b.lse.data(), heads, p.seq_len, 1, rows},
            data.ref_lse.as<float>(), stream);
    return correctness_record(data.plan.tiled
                                  ? "tiled_reference_forward: online softmax over K/V tiles, "
                                    "fp32 accumulate"
                                  : "reference_forward: a CTA per row, double sums",
                              p.dtype, checked, data.plan.forward);
  }
  for (DeviceBuffer* out : {&b.d_q, &b.d_k, &b.d_v})
    CFR_CUDA_CHECK(kernels::poison(out->data(), out->bytes(), stream));
  CFR_CUDA_CHECK(launchers.backward->launch(b.shape, b.backward_io, b.backward_context));
  const kernels::ReferenceRows queries = data.backward_rows.queries();
  const kernels::ReferenceRows keys = data.backward_rows.keys();
  compare(checked, {"dQ", p.dtype, b.d_q.data(), heads, p.seq_len, p.head_dim, queries},
          data.ref_dq.as<float>(), stream);
  compare(checked, {"dK", p.dtype, b.d_k.data(), kv_heads, p.keys(), p.head_dim, keys},
          data.ref_dk.as<float>(), stream);
  compare(checked, {"dV", p.dtype, b.d_v.data(), kv_heads, p.keys(), p.head_dim, keys},
          data.ref_dv.as<float>(), stream);
  return correctness_record(
      fmt::format("{} (O, LSE from {})",
                  data.plan.tiled ? "tiled_reference_backward: P recomputed per tile from the "
                                    "LSE, fp32 accumulate"
                                  : "reference_backward: a CTA per row, double sums",
                  launchers.forward_entry->description.name),
      p.dtype, checked, data.plan.backward);
}

// 4. Time and 5. record -------------------------------------------------------

LaunchFunction timed_launch(const RowLaunchers& launchers, const RowBuffers& b) {
  if (launchers.backward == nullptr) {
    return [forward = launchers.forward, shape = b.shape, io = b.forward_io,
            context = b.forward_context](cudaStream_t stream) {
      kernels::LaunchContext on_stream = context;
      on_stream.stream = stream;
      return forward->launch(shape, io, on_stream);
    };
  }
  return [backward = launchers.backward, shape = b.shape, io = b.backward_io,
          context = b.backward_context](cudaStream_t stream) {
    kernels::LaunchContext on_stream = context;
    on_stream.stream = stream;
    return backward->launch(shape, io, on_stream);
  };
}

measure::TimingResult time_row(const LaunchFunction& launch, const measure::TimingOptions& options,
                               cudaStream_t stream) {
  measure::TimingResult timing;
  if (const cudaError_t error = measure::time_cold(launch, options, stream, timing);
      error != cudaSuccess) {
    throw measure::CudaError(error, "time_cold", "time_cold: " + measure::cuda_error_text(error));
  }
  return timing;
}

Timing timing_record(const measure::TimingResult& timing, const measure::TimingOptions& options) {
  Timing t;
  t.samples_ms = timing.samples_ms;
  t.warmup = timing.warmup_runs;
  t.l2_flush = timing.l2_flush;
  t.l2_flush_mode = timing.l2_flush_mode;
  t.sm_clock_MHz = timing.sm_clock_MHz;
  t.sm_clock_min_MHz = timing.sm_clock_min_MHz;
  t.throttled = timing.throttled;
  t.throttled_discarded = timing.throttled_discarded;
  t.throttle_threshold_percent = 100 * options.throttle_threshold;
  t.kept_throttled = timing.kept_throttled_samples;
  t.noise_target_met = timing.noise_target_met;
  t.stop_reason = timing.stop_reason;
  return t;
}

BenchResult cuda_failure(const measure::CudaError& error, std::string_view kernel,
                         const std::string& launch_message) {
  BenchResult result;
  result.status = RowStatus::failed;
  result.reason = launch_message.empty()
                      ? fmt::format("{}: {}", error.call(), measure::cuda_error_text(error.code()))
                      : fmt::format("{} launch failed: {}", kernel, launch_message);
  result.device_lost = is_sticky(error.code());
  return result;
}

bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: return true;
    default: return false;
  }
}

}  // namespace cfr::bench
