#include "kernels/bench/attention_bench.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"
#include "roofline/report/measured_row.hpp"

namespace cfr::bench {

namespace {

using measure::DeviceBuffer;

std::size_t elements(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_len * p.head_dim);
}
std::size_t rows(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_len);
}

using kernels::shape_of;

bool same_problem(const AttentionProblem& a, const AttentionProblem& b) {
  return a.batch == b.batch && a.heads == b.heads && a.seq_len == b.seq_len &&
         a.head_dim == b.head_dim && a.causal == b.causal && a.dtype == b.dtype;
}

// Errors that leave the context unusable: nothing after them can run.
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

// One problem's inputs and reference outputs, shared by every kernel of that
// problem (the inputs come from the seed, so they are the same for each).
struct ProblemData {
  AttentionProblem problem;
  std::uint64_t seed = 0;
  bool backward = false;
  DeviceBuffer q, k, v, d_o;
  DeviceBuffer ref_o, ref_lse;          // forward reference, fp32
  DeviceBuffer ref_dq, ref_dk, ref_dv;  // backward reference, fp32
};

std::uint64_t problem_seed(std::uint64_t seed, const AttentionProblem& p) {
  std::uint64_t h = seed;
  for (std::int64_t x : {p.batch, p.heads, p.seq_len, p.head_dim,
                         static_cast<std::int64_t>(p.causal), static_cast<std::int64_t>(p.dtype)}) {
    h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001B3ull;
  }
  return h;
}

// The registered kernels a row runs: the kernel itself and, for a backward
// kernel, the forward that produces its O and LSE.
struct RowKernels {
  const kernels::KernelEntry* entry = nullptr;
  const kernels::KernelEntry* forward = nullptr;  // the entry itself, or its forward partner
};

RowKernels row_kernels(const KernelDescription& kernel) {
  RowKernels out;
  out.entry = kernels::registry().find(kernel.name);
  if (out.entry == nullptr) return out;
  out.forward = kernel.direction == Direction::backward
                    ? kernels::registry().forward_partner(*out.entry)
                    : out.entry;
  return out;
}

// A row calls cuBLAS when its kernel, or the forward partner that feeds it,
// does its arithmetic through a library GEMM (the naive kernel).
bool uses_cublas(const RowKernels& row) {
  return row.entry->description.arithmetic == ArithmeticPath::library_gemm ||
         row.forward->description.arithmetic == ArithmeticPath::library_gemm;
}

std::size_t workspace_bytes(const kernels::KernelEntry* entry, const AttentionProblem& p) {
  if (entry == nullptr) return 0;
  return std::visit([&](const auto& launcher) { return launcher.workspace_bytes(shape_of(p)); },
                    entry->launcher);
}

}  // namespace

struct DeviceSession::State {
  int device = 0;
  ComputeCapability cc;
  measure::CudaStream stream;
  // Made at the first row that calls cuBLAS: a sweep without such a kernel
  // never opens the library (kernels/measure/cublas_library.hpp).
  std::optional<measure::CublasHandle> cublas;
  std::optional<ProblemData> data;

  explicit State(int index) : device(index), cc(measure::compute_capability_of(index)) {}
};

namespace {

std::size_t forward_bytes(const KernelDescription& kernel, const AttentionProblem& p) {
  const std::size_t e = static_cast<std::size_t>(element_bytes(p.dtype));
  const std::size_t workspace = workspace_bytes(row_kernels(kernel).entry, p);
  // Q, K, V, O in the dtype; LSE; reference O and LSE in fp32.
  return 4 * elements(p) * e + rows(p) * 4 + workspace + elements(p) * 4 + rows(p) * 4;
}

std::size_t backward_bytes(const KernelDescription& kernel, const AttentionProblem& p) {
  const std::size_t e = static_cast<std::size_t>(element_bytes(p.dtype));
  const RowKernels row = row_kernels(kernel);
  const std::size_t workspace = workspace_bytes(row.entry, p) + workspace_bytes(row.forward, p);
  // Q, K, V, O, dO, dQ, dK, dV in the dtype; LSE; the workspaces of the
  // kernel and its forward partner; fp32 references of dQ, dK, dV and the
  // reference's own materialized P and dP per head batch.
  const std::size_t n = static_cast<std::size_t>(p.seq_len);
  return 8 * elements(p) * e + rows(p) * 4 + workspace + 3 * elements(p) * 4 +
         2 * n * n * 4 * static_cast<std::size_t>(p.heads * p.batch);
}

}  // namespace

std::size_t device_bytes_needed(const KernelDescription& kernel, const AttentionProblem& problem) {
  return kernel.direction == Direction::forward ? forward_bytes(kernel, problem)
                                                : backward_bytes(kernel, problem);
}

DeviceSession::DeviceSession(int device) {
  CFR_CUDA_CHECK(cudaSetDevice(device));
  state_ = std::make_unique<State>(device);
}

DeviceSession::~DeviceSession() = default;

int DeviceSession::device() const {
  return state_->device;
}

namespace {

// Outcome of one step; `error` is set when a CUDA call failed.
struct StepError {
  cudaError_t code = cudaSuccess;
  std::string where;
};

#define CFR_STEP(expr)                                             \
  do {                                                             \
    const cudaError_t step_status_ = (expr);                       \
    if (step_status_ != cudaSuccess) return {step_status_, #expr}; \
  } while (false)

StepError prepare_inputs(ProblemData& data, cudaStream_t stream) {
  const AttentionProblem& p = data.problem;
  const std::size_t bytes = elements(p) * static_cast<std::size_t>(element_bytes(p.dtype));
  data.q = DeviceBuffer(bytes);
  data.k = DeviceBuffer(bytes);
  data.v = DeviceBuffer(bytes);
  CFR_STEP(kernels::fill_random(data.q.data(), elements(p), p.dtype, data.seed ^ 0x51,
                                kernels::Distribution::normal, stream));
  CFR_STEP(kernels::fill_random(data.k.data(), elements(p), p.dtype, data.seed ^ 0x4B,
                                kernels::Distribution::normal, stream));
  CFR_STEP(kernels::fill_random(data.v.data(), elements(p), p.dtype, data.seed ^ 0x56,
                                kernels::Distribution::normal, stream));
  data.ref_o = DeviceBuffer(elements(p) * 4);
  data.ref_lse = DeviceBuffer(rows(p) * 4);
  CFR_STEP(kernels::reference_forward(shape_of(p), data.q.data(), data.k.data(), data.v.data(),
                                      data.ref_o.as<float>(), data.ref_lse.as<float>(), stream));
  if (data.backward) {
    data.d_o = DeviceBuffer(bytes);
    CFR_STEP(kernels::fill_random(data.d_o.data(), elements(p), p.dtype, data.seed ^ 0x644F,
                                  kernels::Distribution::normal, stream));
    data.ref_dq = DeviceBuffer(elements(p) * 4);
    data.ref_dk = DeviceBuffer(elements(p) * 4);
    data.ref_dv = DeviceBuffer(elements(p) * 4);
    CFR_STEP(kernels::reference_backward(shape_of(p), data.q.data(), data.k.data(), data.v.data(),
                                         data.d_o.data(), data.ref_dq.as<float>(),
                                         data.ref_dk.as<float>(), data.ref_dv.as<float>(), stream));
  }
  CFR_STEP(cudaStreamSynchronize(stream));
  return {};
}

// Each tensor, stored as `stored`, is compared with its fp32 reference;
// correctness_record judges them all by the problem's I/O dtype.
StepError check_tensor(const char* name, DType stored, const void* out, const float* reference,
                       std::size_t count, cudaStream_t stream,
                       std::vector<CheckedTensor>& checked) {
  kernels::CheckResult check;
  CFR_STEP(kernels::compare_with_reference(out, stored, reference, count, stream, check));
  checked.push_back({name, check});
  return {};
}

}  // namespace

BenchResult DeviceSession::run(const KernelDescription& kernel, const AttentionProblem& problem,
                               const BenchSettings& settings) {
  BenchResult result;
  State& s = *state_;
  CFR_CUDA_CHECK(cudaSetDevice(s.device));
  const bool backward = kernel.direction == Direction::backward;
  const RowKernels row = row_kernels(kernel);
  const kernels::ForwardKernel* forward = row.forward != nullptr ? row.forward->forward() : nullptr;
  const kernels::BackwardKernel* backward_launcher =
      backward && row.entry != nullptr ? row.entry->backward() : nullptr;
  if (forward == nullptr || (backward && backward_launcher == nullptr)) {
    result.status = RowStatus::skipped;
    result.reason = fmt::format("no CUDA launcher registered for {}", kernel.name);
    return result;
  }
  // Before anything is allocated: a kernel (or its forward partner) with no
  // code for this device is skipped, not failed.
  for (const kernels::KernelEntry* entry : {row.entry, row.forward}) {
    if (auto reason = entry->cannot_run_on(s.cc)) {
      result.status = RowStatus::skipped;
      result.reason = std::move(*reason);
      return result;
    }
  }

  // What a launch said about its own failure (a plugin's message), which
  // names the problem better than the CUDA error code it maps to.
  std::string launch_message;
  auto fail = [&](const StepError& error) {
    result.status = RowStatus::failed;
    result.reason = launch_message.empty()
                        ? fmt::format("{}: {} ({})", error.where, cudaGetErrorName(error.code),
                                      cudaGetErrorString(error.code))
                        : fmt::format("{} launch failed: {}", kernel.name, launch_message);
    result.device_lost = is_sticky(error.code);
    if (!result.device_lost) (void)cudaGetLastError();  // clear a non-sticky error
    return result;
  };

  // Before the memory check, which leaves headroom for the handle's own.
  if (uses_cublas(row) && !s.cublas) {
    try {
      s.cublas.emplace();
    } catch (const std::exception& error) {
      result.status = RowStatus::failed;
      result.reason = error.what();
      return result;
    }
  }
  const cublasHandle_t cublas = s.cublas ? s.cublas->get() : nullptr;

  // New problem (or a backward needing dO): drop the old data before sizing.
  const std::uint64_t seed = problem_seed(settings.seed, problem);
  if (!s.data || !same_problem(s.data->problem, problem) || s.data->seed != seed ||
      (backward && !s.data->backward)) {
    s.data.reset();
    std::size_t free_bytes = 0, total_bytes = 0;
    CFR_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t needed = device_bytes_needed(kernel, problem);
    // Keep 5% headroom for cuBLAS and the driver.
    if (static_cast<double>(needed) > 0.95 * static_cast<double>(free_bytes)) {
      result.status = RowStatus::skipped;
      result.reason = fmt::format("needs {:.2f} GiB of device memory, {:.2f} GiB free",
                                  needed / 1073741824.0, free_bytes / 1073741824.0);
      return result;
    }
    s.data.emplace();
    s.data->problem = problem;
    s.data->seed = seed;
    s.data->backward = backward;
    if (const StepError e = prepare_inputs(*s.data, s.stream); e.code != cudaSuccess) {
      s.data.reset();
      return fail(e);
    }
  }
  ProblemData& data = *s.data;
  const kernels::AttentionShape shape = shape_of(problem);
  const std::size_t bytes =
      elements(problem) * static_cast<std::size_t>(element_bytes(problem.dtype));

  std::string reference;
  std::vector<CheckedTensor> checked;
  std::function<cudaError_t(cudaStream_t)> launch;
  DeviceBuffer o, lse, workspace, forward_workspace, d_q, d_k, d_v;
  try {
    o = DeviceBuffer(bytes);
    lse = DeviceBuffer(rows(problem) * 4);
    const std::size_t forward_ws = forward->workspace_bytes(shape);
    forward_workspace = DeviceBuffer(forward_ws);
    // Zero-filled, as LaunchContext asks (kernels/attention_api.hpp).
    if (forward_ws > 0) CFR_CUDA_CHECK(cudaMemset(forward_workspace.data(), 0, forward_ws));
    if (backward) {
      d_q = DeviceBuffer(bytes);
      d_k = DeviceBuffer(bytes);
      d_v = DeviceBuffer(bytes);
      workspace = DeviceBuffer(backward_launcher->workspace_bytes(shape));
    }
  } catch (const measure::CudaError& error) {
    (void)cudaGetLastError();
    result.status = RowStatus::skipped;
    result.reason = fmt::format("allocation failed: {}", error.what());
    return result;
  }

  const kernels::ForwardBuffers forward_buffers{data.q.data(), data.k.data(), data.v.data(),
                                                o.data(), lse.as<float>()};
  const kernels::LaunchContext forward_context{s.stream, cublas, forward_workspace.data(),
                                               forward_workspace.bytes(), &launch_message};
  if (const StepError e = [&]() -> StepError {
        CFR_STEP(kernels::poison(o.data(), o.bytes(), s.stream));
        CFR_STEP(kernels::poison(lse.data(), lse.bytes(), s.stream));
        CFR_STEP(forward->launch(shape, forward_buffers, forward_context));
        return {};
      }();
      e.code != cudaSuccess) {
    return fail(e);
  }

  if (!backward) {
    reference = "reference_forward: materialized attention, fp32 accumulate";
    if (StepError e = check_tensor("O", problem.dtype, o.data(), data.ref_o.as<float>(),
                                   elements(problem), s.stream, checked);
        e.code != cudaSuccess) {
      return fail(e);
    }
    if (StepError e = check_tensor("LSE", DType::fp32, lse.data(), data.ref_lse.as<float>(),
                                   rows(problem), s.stream, checked);
        e.code != cudaSuccess) {
      return fail(e);
    }
    launch = [&](cudaStream_t stream) {
      kernels::LaunchContext context = forward_context;
      context.stream = stream;
      return forward->launch(shape, forward_buffers, context);
    };
  } else {
    reference = fmt::format(
        "reference_backward: materialized attention gradients, fp32 accumulate (O, LSE from {})",
        row.forward->description.name);
    const kernels::BackwardBuffers backward_buffers{data.q.data(), data.k.data(),   data.v.data(),
                                                    o.data(),      data.d_o.data(), lse.as<float>(),
                                                    d_q.data(),    d_k.data(),      d_v.data()};
    const kernels::LaunchContext backward_context{s.stream, cublas, workspace.data(),
                                                  workspace.bytes(), &launch_message};
    if (const StepError e = [&]() -> StepError {
          for (DeviceBuffer* out : {&d_q, &d_k, &d_v})
            CFR_STEP(kernels::poison(out->data(), out->bytes(), s.stream));
          CFR_STEP(backward_launcher->launch(shape, backward_buffers, backward_context));
          return {};
        }();
        e.code != cudaSuccess) {
      return fail(e);
    }
    const std::pair<const char*, std::pair<DeviceBuffer*, DeviceBuffer*>> grads[] = {
        {"dQ", {&d_q, &data.ref_dq}}, {"dK", {&d_k, &data.ref_dk}}, {"dV", {&d_v, &data.ref_dv}}};
    for (const auto& [name, buffers] : grads) {
      if (StepError e =
              check_tensor(name, problem.dtype, buffers.first->data(), buffers.second->as<float>(),
                           elements(problem), s.stream, checked);
          e.code != cudaSuccess) {
        return fail(e);
      }
    }
    launch = [&, backward_buffers, backward_context](cudaStream_t stream) {
      kernels::LaunchContext context = backward_context;
      context.stream = stream;
      return backward_launcher->launch(shape, backward_buffers, context);
    };
  }
  result.correctness = correctness_record(std::move(reference), problem.dtype, checked);
  if (auto failure = correctness_failure(*result.correctness)) {
    result.status = RowStatus::failed;
    result.reason = std::move(*failure);
    return result;
  }

  measure::TimingResult timing;
  if (const cudaError_t error = measure::time_cold(launch, settings.timing, s.stream, timing);
      error != cudaSuccess) {
    return fail({error, "time_cold"});
  }
  Timing t;
  t.samples_ms = timing.samples_ms;
  t.warmup = timing.warmup_runs;
  t.l2_flush = timing.l2_flush;
  t.sm_clock_MHz = timing.sm_clock_MHz;
  t.sm_clock_min_MHz = timing.sm_clock_min_MHz;
  t.throttled = timing.throttled;
  t.throttled_discarded = timing.throttled_discarded;
  t.throttle_threshold_percent = 100 * settings.timing.throttle_threshold;
  t.kept_throttled = timing.kept_throttled_samples;
  t.noise_target_met = timing.noise_target_met;
  t.stop_reason = timing.stop_reason;
  result.timing = t;
  return result;
}

}  // namespace cfr::bench
