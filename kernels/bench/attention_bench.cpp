#include "kernels/bench/attention_bench.hpp"

#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "kernels/bench/row_stages.hpp"
#include "kernels/measure/board_energy.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"
#include "roofline/core/statistics.hpp"
#include "roofline/report/measured_row.hpp"

namespace cfr::bench {

struct DeviceSession::State {
  int device = 0;
  ComputeCapability cc;
  measure::CudaStream stream;
  // Made at the first row that calls cuBLAS: a sweep without such a kernel
  // never opens the library (kernels/measure/cublas_library.hpp).
  std::optional<measure::CublasHandle> cublas;
  std::optional<ProblemData> data;
  // Opened at the first row that measures energy (sweep --energy): a sweep
  // without it never loads NVML.
  std::optional<measure::BoardEnergy> board;

  explicit State(int index) : device(index), cc(measure::compute_capability_of(index)) {}

  // Why the handle a row needs cannot be opened; nullopt when it is open.
  // Before the memory check, which leaves headroom for the handle's own.
  std::optional<std::string> open_cublas(const RowLaunchers& launchers) {
    if (!launchers.uses_cublas() || cublas) return std::nullopt;
    try {
      cublas.emplace();
    } catch (const std::exception& error) {
      return error.what();
    }
    return std::nullopt;
  }

  // The inputs and references of `problem`, made unless `data` holds them
  // (a new problem, or a backward row needing dO): the old ones are dropped
  // first, and why the new ones cannot fit is returned. Throws
  // measure::CudaError, leaving no half-made data behind.
  std::optional<std::string> load_problem(const KernelDescription& kernel,
                                          const AttentionProblem& problem, std::uint64_t seed,
                                          double check_budget_flops) {
    const bool backward = kernel.direction == Direction::backward;
    if (data && holds_inputs(*data, problem, seed, backward, check_budget_flops)) {
      return std::nullopt;
    }
    data.reset();
    std::size_t free_bytes = 0, total_bytes = 0;
    CFR_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const CheckPlan plan = plan_checks(problem, backward, check_budget_flops, seed);
    if (auto no_room = no_room_reason(device_bytes_needed(kernel, problem, plan), free_bytes)) {
      return no_room;
    }
    data.emplace();
    data->problem = problem;
    data->seed = seed;
    data->backward = backward;
    data->check_budget_flops = check_budget_flops;
    try {
      prepare_inputs(*data, stream);
    } catch (const measure::CudaError&) {
      data.reset();
      throw;
    }
    return std::nullopt;
  }
};

DeviceSession::DeviceSession(int device) {
  CFR_CUDA_CHECK(cudaSetDevice(device));
  state_ = std::make_unique<State>(device);
}

DeviceSession::~DeviceSession() = default;

int DeviceSession::device() const {
  return state_->device;
}

namespace {

BenchResult stopped(RowStatus status, std::string reason) {
  BenchResult result;
  result.status = status;
  result.reason = std::move(reason);
  return result;
}

}  // namespace

// The stages of kernels/bench/row_stages.hpp, in order; a CUDA error in any
// of them fails the row (rule 3 of roofline/core/errors.hpp).
BenchResult DeviceSession::run(const KernelDescription& kernel, const AttentionProblem& problem,
                               const BenchSettings& settings) {
  State& s = *state_;
  CFR_CUDA_CHECK(cudaSetDevice(s.device));
  const OrReason<RowLaunchers> resolved = resolve_row(kernel, s.cc);
  if (const auto* why = std::get_if<std::string>(&resolved)) {
    return stopped(RowStatus::skipped, *why);
  }
  const RowLaunchers& launchers = std::get<RowLaunchers>(resolved);
  if (auto why = s.open_cublas(launchers)) return stopped(RowStatus::failed, std::move(*why));
  // The board's quiet interval, before the first row that measures energy
  // has run anything.
  if (settings.energy && !s.board) {
    s.board = measure::open_board_energy(measure::query_device(s.device).pci_bus_id, {});
  }

  // What a launch said about its own failure (a plugin's message), which
  // names the problem better than the CUDA error code it maps to.
  std::string launch_message;
  BenchResult result;
  try {
    if (auto why = s.load_problem(kernel, problem, problem_seed(settings.seed, problem),
                                  settings.check_budget_flops)) {
      return stopped(RowStatus::skipped, std::move(*why));
    }
    std::optional<RowBuffers> buffers;
    try {
      buffers.emplace(allocate_row(launchers, *s.data, s.stream,
                                   s.cublas ? s.cublas->get() : nullptr, &launch_message));
    } catch (const measure::CudaError& error) {
      (void)cudaGetLastError();  // cudaMalloc's errors are not sticky: clear it
      return stopped(RowStatus::skipped, fmt::format("allocation failed: {}", error.what()));
    }
    result.correctness = check_row(launchers, *buffers, *s.data, s.stream);
    if (auto why = correctness_failure(*result.correctness)) {
      result.status = RowStatus::failed;
      result.reason = std::move(*why);
      return result;
    }
    const measure::TimingResult timing =
        time_row(timed_launch(launchers, *buffers), settings.timing, s.stream);
    result.timing = timing_record(timing, settings.timing);
    if (settings.energy) {
      const double launch_ms =
          timing.samples_ms.empty() ? 1.0 : summarize(timing.samples_ms).median;
      result.energy = measure::measure_board_energy(timed_launch(launchers, *buffers), launch_ms,
                                                    *s.board, {}, s.stream);
    }
    return result;
  } catch (const measure::CudaError& error) {
    BenchResult failed = cuda_failure(error, kernel.name, launch_message);
    failed.correctness = std::move(result.correctness);
    if (!failed.device_lost) (void)cudaGetLastError();  // clear a non-sticky error
    return failed;
  }
}

}  // namespace cfr::bench
