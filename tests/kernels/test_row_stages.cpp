// The stages of DeviceSession::run (kernels/bench/row_stages.hpp) that need
// no GPU, each alone: resolve, the allocate stage's sizes and memory check,
// the timed launch, the record, and the row a CUDA error stops (with a fake
// cudaError_t); the check's verdict is correctness_record's
// (tests/roofline/report/test_measured_row.cpp). The stages that touch the device run
// in tests/kernels/test_plugin_kernels.cpp and every sweep.
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "kernels/bench/row_stages.hpp"
#include "roofline/model/kernel_catalog.hpp"

using namespace cfr;
using namespace cfr::bench;

namespace {

const KernelDescription& described(std::string_view name) {
  const kernels::KernelEntry* entry = kernels::registry().find(name);
  REQUIRE(entry != nullptr);
  return entry->description;
}

const AttentionProblem problem{1, 8, 1024, 64, false, DType::fp16};

}  // namespace

TEST_CASE("resolve: a row's launchers, or why it is skipped before anything is allocated") {
  KernelDescription unknown = fa2_mma_kernel;
  unknown.name = "not_registered";
  const auto none = resolve_row(unknown, {9, 0});
  REQUIRE(std::holds_alternative<std::string>(none));
  CHECK(std::get<std::string>(none) == "no CUDA launcher registered for not_registered");

  // Below its minimum compute capability: the registry's own reason.
  const auto old_gpu = resolve_row(described("fa2_mma"), {7, 5});
  REQUIRE(std::holds_alternative<std::string>(old_gpu));
  CHECK(std::get<std::string>(old_gpu) ==
        *kernels::registry().find("fa2_mma")->cannot_run_on({7, 5}));

  // A backward row runs its forward partner first (catalog: fa1_bwd after fa1_scalar).
  const auto backward = resolve_row(described("fa1_bwd"), {9, 0});
  REQUIRE(std::holds_alternative<RowLaunchers>(backward));
  const RowLaunchers& row = std::get<RowLaunchers>(backward);
  CHECK(row.entry->description.name == "fa1_bwd");
  CHECK(row.forward_entry->description.name == "fa1_scalar");
  CHECK(row.forward != nullptr);
  CHECK(row.backward != nullptr);
  CHECK_FALSE(row.uses_cublas());

  // naive's GEMMs go through cuBLAS; a forward row has no backward launcher.
  const RowLaunchers naive = std::get<RowLaunchers>(resolve_row(described("naive"), {9, 0}));
  CHECK(naive.uses_cublas());
  CHECK(naive.forward_entry == naive.entry);
  CHECK(naive.backward == nullptr);
}

TEST_CASE("allocate: tensor sizes, the bytes a row needs and the room it must find") {
  const TensorSizes n = tensor_sizes(problem);
  CHECK(n.q == 1 * 8 * 1024 * 64);
  CHECK(n.kv == n.q);  // square self-attention: K and V are shaped like Q
  CHECK(n.lse == 1 * 8 * 1024);

  // Forward, fp16: Q, K, V, O at 2 B, LSE, and the fp32 references of O and
  // LSE (fa2_mma has no workspace).
  const CheckPlan full{};
  CHECK(device_bytes_needed(described("fa2_mma"), problem, full) ==
        4 * n.q * 2 + n.lse * 4 + n.q * 4 + n.lse * 4);
  // Backward: eight tensors at 2 B, LSE, fa1_bwd's workspace (D, one float
  // per row), the forward references, fp32 dQ, dK, dV and the references'
  // L and D of every row: no [N, N] matrix.
  CHECK(device_bytes_needed(described("fa1_bwd"), problem, full) ==
        8 * n.q * 2 + n.lse * 4 + n.lse * 4 + (n.q + n.lse) * 4 + 3 * n.q * 4 + 2 * n.lse * 4);
  // The backward row, B1 H4 N131072 d64 fp16, needed 512.88 GiB
  // with P and dP materialized; now about 1 GiB.
  const AttentionProblem long_backward{1, 4, 131072, 64, false, DType::fp16};
  CHECK(device_bytes_needed(described("fa1_bwd"), long_backward, full) < (std::size_t{2} << 30));

  // A sampled check's references hold the sampled rows, and the outputs'
  // gathered rows are counted: 256 query rows of 1024 per head.
  CheckPlan sampled;
  sampled.forward = CheckSample{1, 256, 0};
  const std::size_t rows = 8 * 256;
  CHECK(device_bytes_needed(described("fa2_mma"), problem, sampled) ==
        4 * n.q * 2 + n.lse * 4 + rows * 65 * 4 + rows * (64 * 2 + 4) + rows * sizeof(int));

  const std::size_t gib = std::size_t{1} << 30;
  CHECK_FALSE(no_room_reason(95 * gib, 100 * gib).has_value());  // 5% left free
  CHECK(no_room_reason(96 * gib, 100 * gib) == "needs 96.00 GiB of device memory, 100.00 GiB free");
}

TEST_CASE("allocate: a served problem's K/V by its K/V heads and keys, and its pages") {
  // Decode against a paged cache: B 2, 32 query heads on 8 K/V heads, one
  // query token, 1000 keys in pages of 256 (4 pages a sequence, the last one
  // part full).
  AttentionProblem decode{2, 32, 1, 128, false, DType::fp16};
  decode.kv_len = 1000;
  decode.kv_heads = 8;
  decode.page_size = 256;
  const TensorSizes n = tensor_sizes(decode);
  CHECK(n.q == 2 * 32 * 1 * 128);
  CHECK(n.kv == 2 * 8 * 1000 * 128);
  CHECK(n.lse == 2 * 32);
  CHECK(n.pages_per_sequence == 4);
  CHECK(n.pages == 8);
  CHECK(n.paged_kv == 8 * 8 * 256 * 128);
  // Q, O, the contiguous K, V (the reference's) and their pages at 2 B, the
  // table, LSE, the decode kernel's workspace, the fp32 references.
  const std::size_t workspace =
      kernels::registry().find("fa2_decode")->forward()->workspace_bytes(kernels::shape_of(decode));
  CHECK(device_bytes_needed(described("fa2_decode"), decode, CheckPlan{}) ==
        (2 * n.q + 2 * n.kv + 2 * n.paged_kv) * 2 + 8 * sizeof(int) + n.lse * 4 + workspace +
            n.q * 4 + n.lse * 4);

  // A head dim without a tile has no plan (it would divide by the tile's
  // keys): no workspace, and the launch refuses it.
  AttentionProblem odd_head_dim = decode;
  odd_head_dim.head_dim = 136;
  CHECK(kernels::registry()
            .find("fa2_decode")
            ->forward()
            ->workspace_bytes(kernels::shape_of(odd_head_dim)) == 0);

  AttentionProblem contiguous = decode;
  contiguous.page_size = 0;
  CHECK(tensor_sizes(contiguous).pages == 0);
  CHECK(tensor_sizes(contiguous).paged_kv == 0);

  // The seed tells the served fields apart, and leaves a square problem's as
  // it was (the same inputs as before the served shapes: mixed from the six
  // square fields alone).
  CHECK(problem_seed(7, decode) != problem_seed(7, contiguous));
  AttentionProblem spelled = problem;
  spelled.kv_len = problem.seq_len;
  spelled.kv_heads = problem.heads;
  CHECK(problem_seed(7, spelled) == problem_seed(7, problem));
  std::uint64_t square = 7;
  for (std::int64_t x : {problem.batch, problem.heads, problem.seq_len, problem.head_dim,
                         std::int64_t{0}, static_cast<std::int64_t>(problem.dtype)}) {
    square = (square ^ static_cast<std::uint64_t>(x)) * 0x100000001B3ull;
  }
  CHECK(problem_seed(7, problem) == square);
}

TEST_CASE(
    "plan: the tiled references sample past the budget; a head dim above 128 is checked "
    "in full by the obvious ones") {
  const AttentionProblem long_problem{1, 4, 1 << 20, 64, false, DType::fp16};
  const CheckPlan plan = plan_checks(long_problem, true, default_check_budget_flops, 9);
  CHECK(plan.tiled);
  CHECK(plan.forward ==
        plan_check_sample(long_problem, Direction::forward, default_check_budget_flops, 9));
  CHECK(plan.backward ==
        plan_check_sample(long_problem, Direction::backward, default_check_budget_flops, 9));
  REQUIRE(plan.forward);
  CHECK(plan.forward->seed == 9);
  CHECK_FALSE(plan_checks(long_problem, false, default_check_budget_flops, 9).backward);
  CHECK(plan_checks(problem, true, default_check_budget_flops, 9) == CheckPlan{});

  AttentionProblem wide = long_problem;
  wide.head_dim = 256;
  const CheckPlan obvious = plan_checks(wide, true, default_check_budget_flops, 9);
  CHECK_FALSE(obvious.tiled);
  CHECK_FALSE(obvious.forward);
  CHECK_FALSE(obvious.backward);
}

TEST_CASE("allocate: the inputs of one problem serve every row of it, forward before backward") {
  const std::uint64_t seed = problem_seed(20261202, problem);
  AttentionProblem other = problem;
  other.causal = true;
  CHECK(problem_seed(20261202, other) != seed);
  ProblemData data;
  data.problem = problem;
  data.seed = seed;
  CHECK(holds_inputs(data, problem, seed, false));
  CHECK_FALSE(holds_inputs(data, problem, seed, true));  // no dO, no gradient references
  CHECK_FALSE(holds_inputs(data, other, seed, false));
  CHECK_FALSE(holds_inputs(data, problem, seed + 1, false));
  data.backward = true;
  CHECK(holds_inputs(data, problem, seed, false));
  // Another check budget plans other references.
  CHECK_FALSE(holds_inputs(data, problem, seed, false, default_check_budget_flops / 2));
}

TEST_CASE("time: the timed launch is the row's kernel on the timer's stream") {
  struct Seen {
    int calls = 0;
    int seq_len = 0;
    const void* o = nullptr;
    cudaStream_t stream = nullptr;
    void* workspace = nullptr;
  } seen;
  const kernels::ForwardKernel forward{
      [](const kernels::AttentionShape&) { return std::size_t{0}; },
      [&seen](const kernels::AttentionShape& shape, const kernels::ForwardBuffers& io,
              const kernels::LaunchContext& context) {
        ++seen.calls;
        seen.seq_len = shape.seq_len;
        seen.o = io.o;
        seen.stream = context.stream;
        seen.workspace = context.workspace;
        return cudaErrorNotReady;
      }};
  RowLaunchers launchers;
  launchers.forward = &forward;
  RowBuffers buffers;
  buffers.shape.seq_len = 777;
  int output = 0, workspace = 0;
  buffers.forward_io.o = &output;
  buffers.forward_context.workspace = &workspace;
  buffers.forward_context.stream = reinterpret_cast<cudaStream_t>(0x1);
  const LaunchFunction launch = timed_launch(launchers, buffers);
  const auto timer_stream = reinterpret_cast<cudaStream_t>(0x2);
  CHECK(launch(timer_stream) == cudaErrorNotReady);  // the launch's own status
  CHECK(seen.calls == 1);
  CHECK(seen.seq_len == 777);
  CHECK(seen.o == &output);
  CHECK(seen.workspace == &workspace);
  CHECK(seen.stream == timer_stream);
}

TEST_CASE("record: the timer's result as the report's Timing") {
  measure::TimingResult timing;
  timing.samples_ms = {1.5, 1.25};
  timing.warmup_runs = 3;
  timing.sm_clock_MHz = 1980;
  timing.sm_clock_min_MHz = 1800;
  timing.throttled_discarded = 2;
  timing.throttled = true;
  timing.noise_target_met = true;
  timing.stop_reason = "noise target met";
  timing.l2_flush_mode = "memset";
  measure::TimingOptions options;
  options.throttle_threshold = 0.8;
  const Timing t = timing_record(timing, options);
  CHECK(t.samples_ms == timing.samples_ms);
  CHECK(t.warmup == 3);
  CHECK(t.l2_flush);
  CHECK(t.l2_flush_mode == "memset");
  CHECK(t.sm_clock_MHz == 1980);
  CHECK(t.sm_clock_min_MHz == 1800);
  CHECK(t.throttled);
  CHECK(t.throttled_discarded == 2);
  CHECK(t.throttle_threshold_percent == Approx(80));
  CHECK_FALSE(t.kept_throttled);
  CHECK(t.noise_target_met);
  CHECK(t.stop_reason == "noise target met");
}

TEST_CASE("a CUDA error fails the row, named by the call or by the launch's own words") {
  const measure::CudaError poison(cudaErrorIllegalAddress, "kernels::poison(o, bytes, stream)",
                                  "not shown in a row");
  const BenchResult lost = cuda_failure(poison, "fa2_mma", "");
  CHECK(lost.status == RowStatus::failed);
  CHECK(lost.reason ==
        "kernels::poison(o, bytes, stream): cudaErrorIllegalAddress (an illegal memory access was "
        "encountered)");
  CHECK(lost.device_lost);  // sticky: nothing after it can run on this device

  const measure::CudaError refused(cudaErrorUnknown, "forward->launch(...)", "");
  const BenchResult plugin = cuda_failure(refused, "tiny_fwd", "launches nothing");
  CHECK(plugin.reason == "tiny_fwd launch failed: launches nothing");
  CHECK_FALSE(plugin.device_lost);

  const measure::CudaError timer(cudaErrorInvalidValue, "time_cold", "");
  CHECK(cuda_failure(timer, "x", "").reason ==
        "time_cold: cudaErrorInvalidValue (invalid argument)");
}
