#pragma once

// A measured, profiled row for the tests of the profile figures, the JSON and
// audit: fa1_wmma fp16, B 1, H 8, N 1024, d 64, not causal, on an H200 (the
// device's L2 and SMs as cudaGetDeviceProperties gives them: 60 MiB, 132).
// The counters are round numbers chosen by hand, except the tensor count,
// which is the model's exact FLOPs (as recorded for every non-causal tensor
// row of fixtures/ncu/l2data.csv).

#include <map>
#include <string>

#include "roofline/core/statistics.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::test {

inline constexpr ComputeCapability h200_cc{9, 0};

inline L2ModelInputs h200_l2_inputs() {
  return {62914560, 2, 132, h200_cc, "device 0"};
}

// H200 datasheet bandwidth and fp16 tensor peak; an L2 bandwidth as
// `ceilings` would report it.
inline CeilingRecord h200_profile_ceiling() {
  CeilingRecord c;
  c.gpu = "h200";
  c.source = "measured";
  c.bandwidth_GBps = 4800;
  c.l2_bandwidth_GBps = 10000;
  c.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  return c;
}

// Instruction roofs as a ceilings file would give them (round numbers near
// the H200's: mma.sync 650 TFLOP/s, FFMA 60): the figures docs/model.md §8.3
// judges a row against.
inline std::map<std::string, double, std::less<>> h200_instruction_roofs() {
  return {{"fp16_tensor_mma", 650},    {"bf16_tensor_mma", 640}, {"fp16_tensor_cublas", 700},
          {"bf16_tensor_cublas", 690}, {"fp32_simt_fma", 60},    {"fp16_tensor_wgmma", 900}};
}

inline DeviceRecord h200_device() {
  DeviceRecord d;
  d.index = 0;
  d.name = "NVIDIA H200";
  d.cc = "9.0";
  d.sm_count = 132;
  d.l2_bytes = 62914560;
  return d;
}

inline Profile hand_profile(double tensor_flops) {
  Profile p;
  p.tool = "Nsight Compute";
  p.version = "Version 2025.3.1.0";
  p.command = "ncu --csv --page raw ... cuflash-roofline profile-child --rows rows.txt";
  const auto add = [&](std::string metric, std::string unit, std::optional<double> value) {
    p.counters.push_back({std::move(metric), std::move(unit), value, value ? "" : "n/a"});
  };
  add("dram__bytes_read.sum", "byte", 6e6);
  add("dram__bytes_write.sum", "byte", 2e6);
  add("lts__t_bytes.sum", "byte", 40e6);
  add("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "", 1e6);
  add("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "", 0);
  add("sm__ops_path_tensor_src_fp16.sum", "", tensor_flops);
  add("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "", 0);
  add("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", 1e6);
  add("gpu__time_duration.sum", "ns", 50000);
  add("sm__cycles_elapsed.avg.per_second", "hz", 1.98e9);
  return p;
}

// The counters asked for since the cycle check and the limiter from counters
// (issue 23), round numbers by hand: 99,000 SM cycles (50 us at 1.98 GHz), a
// tensor pipe busy 30 % (HMMA) of its active cycles, FMA 20 %, LSU 10 %,
// shared 40 %, issue slots 35 %, no eligible warp in 55 %, and three stall
// reasons of 6e6 warp-cycles in all.
inline void add_why_counters(Profile& p) {
  const auto add = [&](std::string metric, std::string unit, double value) {
    p.counters.push_back({std::move(metric), std::move(unit), value, ""});
  };
  add("sm__cycles_elapsed.avg", "cycle", 99000);
  add("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "%", 30);
  add("sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "%", 20);
  add("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%", 10);
  add("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed", "%", 40);
  add("sm__inst_issued.avg.pct_of_peak_sustained_active", "%", 35);
  add("smsp__issue_inst0.avg.pct_of_peak_sustained_active", "%", 55);
  add("smsp__warps_issue_stalled_long_scoreboard.sum", "warp", 3e6);
  add("smsp__warps_issue_stalled_barrier.sum", "warp", 2e6);
  add("smsp__warps_issue_stalled_mio_throttle.sum", "warp", 1e6);
  // Three profiled launches after a warm-up; the recorded one is the median, 99,000.
  p.launches = ProfileLaunches{1, "sm__cycles_elapsed.avg", {101000.0, 99000.0, 97500.0}, 1};
  // Timed in the profiled process too: 0.0560 ms at 1980 MHz = 110,880 cycles; the floor of
  // one empty kernel, 8.0 us of events against ncu's 2.0 us, is 11,880 of them; (110,880 -
  // 11,880) / 99,000 = 1.
  p.process_timing = ProcessTiming{{0.0555, 0.0560, 0.0570}, 1980, false};
  p.timer_floor = TimerFloor{1, {{0.0079, 0.0080, 0.0082}, 1500, false}, {2100.0, 2000.0, 1900.0}};
}

inline ResultRow profiled_row(const CeilingRecord& ceiling) {
  const AttentionProblem problem{1, 8, 1024, 64, false, DType::fp16};
  ResultRow row = model_row(fa1_wmma_kernel, problem, ceiling, FlopConvention::exact, h200_cc,
                            h200_l2_inputs());
  row.device = 0;
  row.timing = Timing{};
  row.timing->samples_ms = {0.0505, 0.0510, 0.0500};
  row.timing->summary = summarize(row.timing->samples_ms);
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, ceiling);
  row.profile = hand_profile(row.model->flops.exact);
  row.profile->derived = profile_figures(row, ceiling, h200_cc);
  return row;
}

}  // namespace cfr::test
