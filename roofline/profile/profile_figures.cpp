#include "roofline/profile/profile_figures.hpp"

#include <array>

#include <fmt/format.h>

#include "roofline/core/statistics.hpp"
#include "roofline/profile/counter_limiter.hpp"
#include "roofline/profile/profile_checks.hpp"

namespace cfr {

namespace {

constexpr std::string_view dram_read = "dram__bytes_read.sum";
constexpr std::string_view dram_write = "dram__bytes_write.sum";
constexpr std::string_view l2_bytes = "lts__t_bytes.sum";
constexpr std::string_view duration = "gpu__time_duration.sum";
constexpr std::string_view sm_cycles = "sm__cycles_elapsed.avg";
// The "why" counters (docs/model.md, "The limiter from counters"): percentages
// of each unit's peak, averaged over the SMs (and launches, by duration).
// On gh100 this counts HGMMA (wgmma) cycles as well as HMMA: ncu 2025.3's
// --query-metrics describes it as "HMMA/HFMA2.MMA/HGMMA/QGMMA ops" and lists
// no separate gmma pipe (results/h200/limiter/limiter-metrics.log).
constexpr std::string_view hmma_pipe =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
constexpr std::string_view fma_pipe = "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active";
constexpr std::string_view lsu_pipe = "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active";
constexpr std::string_view shared_pipe =
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed";
constexpr std::string_view issued = "sm__inst_issued.avg.pct_of_peak_sustained_active";
constexpr std::string_view no_eligible = "smsp__issue_inst0.avg.pct_of_peak_sustained_active";
// Every stall reason of ncu's warp-state table but `selected` (the warp that
// issued): smsp__warps_issue_stalled_<reason>.sum, warp-cycles.
constexpr std::array<std::string_view, 17> stall_reasons{"barrier",
                                                         "branch_resolving",
                                                         "dispatch_stall",
                                                         "drain",
                                                         "imc_miss",
                                                         "lg_throttle",
                                                         "long_scoreboard",
                                                         "math_pipe_throttle",
                                                         "membar",
                                                         "mio_throttle",
                                                         "misc",
                                                         "no_instruction",
                                                         "not_selected",
                                                         "short_scoreboard",
                                                         "sleeping",
                                                         "tex_throttle",
                                                         "wait"};
constexpr std::size_t stalls_shown = 3;

std::string stall_metric(std::string_view reason) {
  return fmt::format("smsp__warps_issue_stalled_{}.sum", reason);
}

// A pct_of_peak counter as a fraction.
std::optional<double> fraction(const Profile& profile, std::string_view metric) {
  const auto percent = profile.value(metric);
  return percent ? std::optional<double>(*percent / 100) : std::nullopt;
}

// The top stall reasons of the counters the row has.
std::vector<Stall> recorded_stalls(const Profile& profile) {
  std::vector<Stall> stalls;
  for (std::string_view reason : stall_reasons) {
    if (const auto cycles = profile.value(stall_metric(reason))) {
      stalls.push_back({std::string(reason), *cycles});
    }
  }
  return top_stalls(stalls, stalls_shown);
}

void why_figures(const Profile& profile, ProfileDerived& out) {
  out.tensor_pipe = fraction(profile, hmma_pipe);
  out.fma_pipe = fraction(profile, fma_pipe);
  out.lsu_pipe = fraction(profile, lsu_pipe);
  out.shared_pipe = fraction(profile, shared_pipe);
  out.issue_slots = fraction(profile, issued);
  out.no_eligible = fraction(profile, no_eligible);
  const std::vector<Stall> top = recorded_stalls(profile);
  if (!top.empty()) out.top_stalls = stall_text(top);
}

// The pipes' fractions, named as the limiter names them; only those measured.
std::vector<Utilization> pipe_uses(const ProfileDerived& out) {
  std::vector<Utilization> pipes;
  const std::array<std::pair<std::string_view, std::optional<double>>, 4> named{
      {{"tensor_pipe", out.tensor_pipe},
       {"fma_pipe", out.fma_pipe},
       {"lsu_pipe", out.lsu_pipe},
       {"shared_pipe", out.shared_pipe}}};
  for (const auto& [name, value] : named) {
    if (value) pipes.push_back({std::string(name), *value});
  }
  return pipes;
}

ProfileLevel level_figures(std::string name, double flops, std::optional<double> bytes,
                           std::optional<double> bandwidth_GBps, std::optional<double> peak,
                           const std::optional<Achieved>& achieved) {
  ProfileLevel level;
  level.bytes = bytes;
  if (!bytes || *bytes <= 0 || flops <= 0) return level;
  level.ai = flops / *bytes;
  if (!bandwidth_GBps || *bandwidth_GBps <= 0 || !peak || *peak <= 0) return level;
  const LevelPoint point = level_point(std::move(name), flops, *bytes, *bandwidth_GBps, *peak);
  level.regime = std::string(to_string(point.point.regime));
  level.roof_TFLOPs = point.point.roof_TFLOPs;
  if (achieved && achieved->TFLOPs > 0)
    level.fraction_of_roof = achieved->TFLOPs / *level.roof_TFLOPs;
  return level;
}

void limiter_figures(const ResultRow& row, const CeilingRecord& ceiling, ProfileDerived& out) {
  const auto seconds = row.profile->value(duration);
  if (!seconds || *seconds <= 0) return;
  std::vector<ResourceUse> resources;
  const double dram_bandwidth = ceiling.bandwidth(row.model->memory_roof_used());
  if (out.dram.bytes && dram_bandwidth > 0) {
    resources.push_back({"dram", *out.dram.bytes, dram_bandwidth * 1e9});
  }
  if (out.l2.bytes && ceiling.l2_bandwidth_GBps) {
    resources.push_back({"l2", *out.l2.bytes, *ceiling.l2_bandwidth_GBps * 1e9});
  }
  if (out.counted_flops && ceiling.peak(row.compute_unit)) {
    resources.push_back({std::string(to_string(row.compute_unit)), *out.counted_flops,
                         *ceiling.peak(row.compute_unit) * 1e12});
  }
  if (resources.empty()) return;
  const Limiter limiter = find_limiter(resources, *seconds * 1e-9);
  out.limiter = limiter.name;
  out.limiter_fraction = limiter.fraction;
  std::vector<Utilization> uses = limiter.utilizations;
  for (const Utilization& pipe : pipe_uses(out)) uses.push_back(pipe);
  std::string text;
  for (const Utilization& u : uses) {
    text += fmt::format("{}{} {:.3f}", text.empty() ? "" : "; ", u.name, u.fraction);
  }
  out.utilizations = text;
  // With the issue and scheduler counters, the binding rule decides; a report
  // profiled before them keeps the largest fraction.
  if (!out.issue_slots || !out.no_eligible) return;
  const Binding binding =
      binding_limiter({uses, *out.issue_slots, *out.no_eligible, recorded_stalls(*row.profile)});
  out.limiter = binding.name;
  out.limiter_fraction = binding.fraction;
}

void flop_figures(const ResultRow& row, std::optional<ComputeCapability> cc, ProfileDerived& out) {
  const auto counter = flop_counter(row.compute_unit);
  if (!counter) return;
  const auto count = row.profile->value(counter->metric);
  if (!count) return;
  out.counted_flops = *count * counter->flops_per_count;
  out.flop_counter = fmt::format("{} x {}", counter->metric, counter->flops_per_count);
  const double model_exact = row.model->flops.exact;
  if (model_exact <= 0) return;
  out.flop_ratio = *out.counted_flops / model_exact;
  if (row.direction != Direction::forward) {
    out.masked_work = "backward: no prediction of the diagonal blocks' extra work";
    return;
  }
  if (!row.problem.square()) {
    // fa2_decode pads a K/V head's group rows to 16-row MMA tiles: for a
    // decoding step of 4 query heads the tensor pipe counts 4x the pairs.
    out.masked_work =
        "served shape (Nq != Nk, GQA or pages): no prediction of the padded and masked work";
    return;
  }
  const KernelDescription* kernel = find_kernel(row.kernel);
  const auto rows =
      mask_rows(row.kernel, row.tile, static_cast<int>(row.problem.head_dim),
                cc.value_or(kernel ? kernel->min_compute_capability : ComputeCapability{}));
  if (!rows) return;
  const FlopCheck check = flop_check(*out.counted_flops, row.problem, *rows, row.tile.bc);
  out.flop_expected_ratio = check.expected_ratio;
  out.masked_work = check.masked_work;
}

}  // namespace

std::vector<std::string> profile_metrics() {
  std::vector<std::string> metrics{std::string(dram_read),
                                   std::string(dram_write),
                                   std::string(l2_bytes),
                                   "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
                                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
                                   "sm__ops_path_tensor_src_fp16.sum",
                                   "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                                   "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                   std::string(duration),
                                   "sm__cycles_elapsed.avg.per_second"};
  for (std::string_view metric :
       {sm_cycles, hmma_pipe, fma_pipe, lsu_pipe, shared_pipe, issued, no_eligible}) {
    metrics.emplace_back(metric);
  }
  for (std::string_view reason : stall_reasons) metrics.push_back(stall_metric(reason));
  return metrics;
}

std::vector<ProfileCounter> profile_counters(const ncu::RowCounters& row,
                                             const ncu::MetricNames& chip) {
  std::vector<ProfileCounter> counters;
  for (const std::string& metric : profile_metrics()) {
    if (!ncu::chip_has(chip, metric)) {
      counters.push_back({metric, "", std::nullopt, "not on this chip (ncu --query-metrics)"});
      continue;
    }
    const ncu::MetricValue* value = row.metric(metric);
    if (value == nullptr) {
      counters.push_back({metric, "", std::nullopt, "absent from ncu's CSV"});
    } else if (!value->available()) {
      counters.push_back({metric, value->unit, std::nullopt,
                          fmt::format("unavailable in ncu's CSV ('{}')", value->text)});
    } else {
      counters.push_back({metric, value->unit, value->value, ""});
    }
  }
  return counters;
}

std::optional<FlopCounter> flop_counter(ComputeUnit unit) {
  switch (unit) {
    case ComputeUnit::fp16_tensor: return FlopCounter{"sm__ops_path_tensor_src_fp16.sum", 1};
    case ComputeUnit::bf16_tensor:
      return FlopCounter{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1};
    case ComputeUnit::fp32_simt:
      return FlopCounter{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", flops_per_ffma};
    default: return std::nullopt;
  }
}

std::optional<int> mask_rows(std::string_view name, const TileShape& tile, int head_dim,
                             ComputeCapability cc) {
  const KernelDescription* kernel = find_kernel(name);
  if (kernel == nullptr) return std::nullopt;
  if (kernel->arithmetic == ArithmeticPath::library_gemm) return 0;
  if (!tile.tiled()) return std::nullopt;
  if (kernel->arithmetic == ArithmeticPath::fp32_simt) return tile.br;
  const KernelConfig config = kernel->config_for(head_dim, cc);
  if (config.warps <= 0) return std::nullopt;
  return tile.br / config.warps;
}

namespace {

// The timing check inside the profiled process (docs/model.md §8.2): the
// child's own samples against the recorded launch, less the timer floor of a
// row of as many kernels; and how far the sweep's process ran from it.
void process_timing_figures(const Profile& profile, std::optional<double> ncu_cycles,
                            ProfileDerived& out) {
  const std::optional<ProcessTiming>& timing = profile.process_timing;
  if (!timing || timing->samples_ms.empty() || !(timing->sm_clock_MHz > 0)) return;
  const double median_ms = summarize(timing->samples_ms).median;
  if (!(median_ms > 0)) return;
  out.process_cycles = cycles_in(median_ms, timing->sm_clock_MHz);
  if (out.our_cycles) out.sweep_process_ratio = *out.our_cycles / *out.process_cycles;
  // A floor timed with the stream blocker and a row without it (or the
  // reverse) cost the host's launch differently: no floor then.
  if (!profile.timer_floor || !ncu_cycles || !(*ncu_cycles > 0) ||
      profile.timer_floor->events.stream_blocked != timing->stream_blocked) {
    return;
  }
  const std::optional<double> floor_ms = timer_floor_ms(*profile.timer_floor);
  if (!floor_ms) return;
  const double floor = cycles_in(*floor_ms, timing->sm_clock_MHz);
  if (!(*out.process_cycles - floor > 0)) return;
  out.timer_floor_cycles = floor;
  out.process_cycle_ratio =
      process_cycle_check(median_ms, timing->sm_clock_MHz, floor, *ncu_cycles).ratio;
}

}  // namespace

ProfileDerived profile_figures(const ResultRow& row, const CeilingRecord& ceiling,
                               std::optional<ComputeCapability> cc) {
  ProfileDerived out;
  const Profile& profile = *row.profile;
  const ModelFigures& model = *row.model;
  std::optional<double> dram;
  if (const auto read = profile.value(dram_read)) {
    if (const auto write = profile.value(dram_write)) dram = *read + *write;
  }
  const std::optional<double> peak = ceiling.peak(row.compute_unit);
  const double flops = model.flops.counted();
  out.dram = level_figures("dram", flops, dram, ceiling.bandwidth(model.memory_roof_used()), peak,
                           row.achieved);
  out.l2 = level_figures("l2", flops, profile.value(l2_bytes), ceiling.l2_bandwidth_GBps, peak,
                         row.achieved);
  flop_figures(row, cc, out);
  why_figures(profile, out);
  limiter_figures(row, ceiling, out);
  if (dram && *dram > 0) out.dram_model_error = model_error(model.dram_bytes(), *dram);
  // A plugin's own count is of HBM bytes, not of what the SMs load from L2.
  if (out.l2.bytes && *out.l2.bytes > 0 && model.traffic.model != TrafficModelKind::plugin) {
    out.l2_model_error = model_error(model.traffic.bytes, *out.l2.bytes);
  }
  const auto ncu_ns = profile.value(duration);
  if (ncu_ns && *ncu_ns > 0 && row.timing && row.timing->summary.median > 0) {
    out.timing_ratio = timing_ratio(row.timing->summary.median * 1e6, *ncu_ns);
  }
  const auto cycles = profile.value(sm_cycles);
  if (cycles && *cycles > 0 && row.timing && row.timing->summary.median > 0 &&
      row.timing->sm_clock_MHz > 0) {
    const CycleCheck check =
        cycle_check(row.timing->summary.median, row.timing->sm_clock_MHz, *cycles);
    out.our_cycles = check.our_cycles;
    out.ncu_cycles = check.ncu_cycles;
    out.cycle_ratio = check.ratio;
  }
  process_timing_figures(profile, cycles, out);
  return out;
}

}  // namespace cfr
