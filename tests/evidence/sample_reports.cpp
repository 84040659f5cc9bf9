#include "sample_reports.hpp"

#include "tests/roofline/energy_readings.hpp"
#include "tests/roofline/profiled_row.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/model/gpu_table.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

std::string read_text(const std::string& path) {
  return cfr::test::read_source_text(path);
}

template <typename Each>
void for_each_point(Each each) {
  for (const KernelDescription* kernel : {&fa1_scalar_kernel, &fa1_wmma_kernel}) {
    for (std::int64_t n : {1024, 4096}) {
      for (bool causal : {false, true})
        each(*kernel, AttentionProblem{1, 8, n, 64, causal, DType::fp16});
    }
  }
}

}  // namespace

CeilingRecord h200_datasheet() {
  CeilingRecord c;
  c.gpu = "h200";
  c.gpu_name = "NVIDIA H200 SXM 141GB";
  c.source = "datasheet";
  c.source_detail = "configs/gpus.json (built in)";
  c.bandwidth_GBps = 4800;
  c.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  return c;
}

Report measured_report() {
  Report r;
  r.tool.version = "0.1.0";
  r.tool.git_commit = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  r.tool.git_dirty = false;
  r.tool.build_type = "release";
  r.tool.cuda_archs = "90a";
  r.provenance.source = ProvenanceSource::measured;
  r.provenance.auditable = true;
  r.provenance.created_utc = "2026-12-02T00:00:00Z";
  r.provenance.command = "cuflash-roofline sweep --json results/h200/sweep.json";
  r.provenance.host = "gpu-host";
  r.devices.push_back({0, "NVIDIA H200", "9.0", 132, 62914560, 1.5e11, 1980, 3201, "580.65", "13.0",
                       "0000:00:01.0"});
  r.ceiling = h200_datasheet();
  r.ceiling.matches_device = true;
  for_each_point([&](const KernelDescription& kernel, const AttentionProblem& problem) {
    ResultRow row = model_row(kernel, problem, r.ceiling, FlopConvention::exact);
    row.device = 0;
    // A plausible time: a few times the roofline bound, samples about 1% apart.
    const double t = row.model->roofline->roof_time_ms * (kernel.name == "fa1_scalar" ? 6.0 : 2.5);
    row.timing = Timing{};
    row.timing->samples_ms = {t, t * 1.01, t * 0.99, t * 1.02, t * 0.995};
    row.timing->warmup = 3;
    row.timing->sm_clock_MHz = 1980;
    row.timing->noise_target_met = true;
    row.timing->stop_reason = "noise target met";
    row.timing->summary = summarize(row.timing->samples_ms);
    row.achieved = achieved_figures(*row.model, row.timing->summary.median, r.ceiling);
    row.correctness = Correctness{"reference_forward fp32", 1e-3,        2e-3, 5e-3, true,
                                  {{"O", 1e-3, 2e-3}},      std::nullopt};
    r.results.push_back(row);
  });
  ResultRow skipped = model_row(fa1_wmma_kernel, {1, 8, 1024, 64, false, DType::fp32}, r.ceiling,
                                FlopConvention::exact);
  skipped.device = 0;
  r.results.push_back(skipped);
  return r;
}

Report model_report() {
  Report r;
  r.tool.version = "0.1.0";
  r.tool.git_commit = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  r.tool.git_dirty = false;
  r.provenance.source = ProvenanceSource::model;
  r.provenance.reasons = {"a model projection: nothing was measured"};
  r.provenance.created_utc = "2026-12-02T00:00:00Z";
  r.provenance.command = "cuflash-roofline model --gpu h200";
  r.ceiling = h200_datasheet();
  for_each_point([&](const KernelDescription& kernel, const AttentionProblem& problem) {
    r.results.push_back(model_row(kernel, problem, r.ceiling, FlopConvention::exact));
  });
  return r;
}

void set_row_samples(Report& report, std::size_t index, std::vector<double> samples_ms) {
  ResultRow& row = report.results.at(index);
  row.timing->samples_ms = std::move(samples_ms);
  row.timing->summary = summarize(row.timing->samples_ms);
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, report.ceiling);
}

void scale_row_time(Report& report, std::size_t index, double factor) {
  std::vector<double> samples = report.results.at(index).timing->samples_ms;
  for (double& sample : samples) sample *= factor;
  set_row_samples(report, index, std::move(samples));
}

evidence::HistoricalTable seed_table() {
  return evidence::parse_historical_table(
      nlohmann::json::parse(read_text(source_path("configs/historical/v0.4.0.json"))));
}

Report seed_report(const std::string& gpu) {
  const GpuTable gpus = parse_gpu_table(
      nlohmann::json::parse(read_text(source_path("configs/gpus.json"))), "configs/gpus.json");
  return evidence::historical_report(seed_table(), gpu, gpus);
}

Report every_kernel_report() {
  Report r = measured_report();
  r.results.clear();
  r.ceiling.l2_bandwidth_GBps = 10000;   // as `ceilings` would measure it: the L2 roof
  r.ceiling.read_bandwidth_GBps = 4600;  // and the read stream: fa2_decode's memory roof
  r.ceiling.instruction_TFLOPs = cfr::test::h200_instruction_roofs();  // and each instruction's
  for (const KernelDescription& kernel : kernel_catalog) {
    // Square self-attention, or a decode step of 4 query heads per K/V head
    // for a kernel built for few query tokens (fa2_decode).
    AttentionProblem problem{1, 8, 1024, 64, true, DType::fp16};
    if (shape_reason(kernel, problem)) {
      problem.seq_len = 1;
      problem.kv_len = 1024;
      problem.kv_heads = 2;
    }
    ResultRow row = model_row(kernel, problem, r.ceiling, FlopConvention::exact,
                              ComputeCapability{9, 0}, l2_model_inputs(r.devices.front()));
    row.device = 0;
    const double t = row.model->roofline->roof_time_ms * 3;
    row.timing = Timing{};
    row.timing->samples_ms = {t, t * 1.01, t * 0.99, t * 1.02, t * 0.995};
    row.timing->summary = summarize(row.timing->samples_ms);
    row.achieved = achieved_figures(*row.model, row.timing->summary.median, r.ceiling);
    row.correctness = Correctness{"reference fp32", 1e-3, 2e-3, 5e-3, true, {}, std::nullopt};
    if (kernel.name == "fa1_wmma") {
      row.timing->sm_clock_MHz = 1980;
      row.profile = cfr::test::hand_profile(row.model->flops.exact);
      cfr::test::add_why_counters(*row.profile);
      row.profile->derived = profile_figures(row, r.ceiling, ComputeCapability{9, 0});
    }
    if (kernel.name == "fa2_mma") {
      row.energy = cfr::test::measured_energy();
      record_energy_figures(*row.energy, row.model->flops.counted());
    }
    r.results.push_back(row);
  }
  return r;
}

CeilingsReport energy_ceilings() {
  CeilingsReport r = ceilings_from_json(
      nlohmann::json::parse(read_text(source_path("results/h200/ceilings.json"))));
  for (CeilingFigure& f : r.figures) {
    const bool bytes = f.unit == "GB/s";
    const double watts = bytes ? 600 : f.figure.find("tensor") != std::string::npos ? 690 : 400;
    const double work = f.value * (bytes ? 1e9 : 1e12) * 0.002;
    f.energy = cfr::test::measured_ceiling_energy(watts, work);
  }
  return r;
}

nlohmann::json raw_problem(const char* dtype, std::int64_t seq_len) {
  return {{"dtype", dtype},     {"batch", 1},     {"heads", 8},
          {"seq_len", seq_len}, {"head_dim", 64}, {"causal", false}};
}

nlohmann::json raw_passing_check() {
  return {{"reference", "fp32 materialized attention"},
          {"tensors",
           {{{"tensor", "O"},
             {"rel_l2_err", 3e-4},
             {"max_abs_err", 1e-3},
             {"ref_max_abs", 3.5},
             {"all_finite", true}}}}};
}

nlohmann::json raw_timing(std::vector<double> samples) {
  return {{"samples_ms", samples},
          {"warmup", 3},
          {"l2_flush", true},
          {"sm_clock_MHz", 1980},
          {"sm_clock_min_MHz", 1965},
          {"throttled", false},
          {"throttled_discarded", 0},
          {"throttle_threshold_percent", 75},
          {"kept_throttled", false},
          {"noise_target_met", true},
          {"stop_reason", "noise target met"}};
}

namespace {

nlohmann::json raw_measured_row(const char* kernel, const char* dtype, std::int64_t seq_len) {
  return {{"kernel", kernel},
          {"problem", raw_problem(dtype, seq_len)},
          {"device", 0},
          {"status", "ok"},
          {"reason", ""},
          {"check", raw_passing_check()},
          {"timing", raw_timing({0.022, 0.020, 0.021})}};
}

}  // namespace

nlohmann::json peer_raw_samples() {
  return {{"schema", "cuflash-roofline/raw-samples/v1"},
          {"tool",
           {{"name", "cuflash-roofline/peers/torch_sdpa"},
            {"version", "0.1.0"},
            {"git_commit", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"},
            {"git_dirty", false}}},
          {"provenance",
           {{"created_utc", "2026-12-04T00:00:00Z"},
            {"command", "peers/torch_sdpa.py --json x.json"},
            {"host", "gpu-host"},
            {"environment", {{"python", "3.12.3"}, {"torch", "2.11.0+cu130"}}},
            {"reasons", nlohmann::json::array()},
            {"finished", true}}},
          {"devices",
           {{{"index", 0},
             {"name", "NVIDIA H200"},
             {"cc", "9.0"},
             {"sm_count", 132},
             {"l2_bytes", 62914560.0},
             {"memory_bytes", 150109880320.0},
             {"clock_MHz", 1980.0},
             {"memory_clock_MHz", 3201.0},
             {"driver", "13.0 (580.159.04)"},
             {"runtime", "13.0"},
             {"pci_bus_id", "0000:00:06.0"}}}},
          {"backends",
           {{{"kernel", "torch_sdpa_flash"}, {"arithmetic", "tensor_for_dtype"}},
            {{"kernel", "torch_sdpa_math"}, {"arithmetic", "fp32_simt"}}}},
          {"results",
           {raw_measured_row("torch_sdpa_flash", "fp16", 1024),
            raw_measured_row("torch_sdpa_math", "fp16", 1024),
            {{"kernel", "torch_sdpa_flash"},
             {"problem", raw_problem("bf16", 1024)},
             {"device", 0},
             {"status", "skipped"},
             {"reason", "torch refused: no kernel"}}}}};
}

nlohmann::json raw_backward_check() {
  nlohmann::json check = raw_passing_check();
  check["reference"] = "fp32 materialized backward";
  const nlohmann::json errors = check["tensors"][0];
  check["tensors"] = nlohmann::json::array();
  for (const char* tensor : {"dQ", "dK", "dV"}) {
    check["tensors"].push_back(errors);
    check["tensors"].back()["tensor"] = tensor;
  }
  return check;
}

nlohmann::json peer_backward_raw_samples() {
  nlohmann::json document = peer_raw_samples();
  const nlohmann::json forward = document["results"][0];
  nlohmann::json backward = forward;
  backward["direction"] = "backward";
  backward["check"] = raw_backward_check();
  backward["timing"] = raw_timing({0.062, 0.060, 0.061});
  nlohmann::json grouped = backward;
  grouped["problem"]["kv_heads"] = 2;
  nlohmann::json longer = backward;
  longer["problem"]["kv_len"] = 2048;
  document["results"] = {forward, backward, grouped, longer};
  return document;
}
