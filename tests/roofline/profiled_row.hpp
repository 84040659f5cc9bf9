#pragma once

// A measured, profiled row for the tests of the profile figures, the JSON and
// audit: fa1_wmma fp16, B 1, H 8, N 1024, d 64, not causal, on an H200 (the
// device's L2 and SMs as cudaGetDeviceProperties gives them: 60 MiB, 132).
// The counters are round numbers chosen by hand, except the tensor count,
// which is the model's exact FLOPs (as recorded for every non-causal tensor
// row of fixtures/ncu/l2data.csv).

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
