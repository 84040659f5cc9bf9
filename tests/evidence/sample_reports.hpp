#pragma once

// Reports the evidence tests start from, built through the same functions the
// sweep uses (model_row, summarize, achieved_figures), so a clean one is
// consistent by construction and each test tampers with one thing.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/evidence/historical.hpp"
#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report.hpp"

// The H200 datasheet roof of configs/gpus.json: 4800 GB/s, fp32 SIMT 67,
// fp16 SIMT 133.8, fp16/bf16 tensor 989.4 TFLOP/s.
cfr::CeilingRecord h200_datasheet();

// A measured, auditable H200 report: fa1_scalar and fa1_wmma forward, fp16,
// B=1 H=8 d=64, N in {1024, 4096}, causal and not (8 ok rows, each with five
// samples about 1% apart), plus one skipped row (fa1_wmma has no fp32).
cfr::Report measured_report();

// One measured row of every catalog kernel (naive, fa1_scalar, fa1_wmma,
// fa2_mma, fa1_bwd) at B=1 H=8 N=1024 d=64 causal fp16 with the L2-aware
// model of the H200 device: every traffic model applies to one of them. The
// fa1_wmma row is profiled (tests/roofline/profiled_row.hpp's counters, the
// cycle and "why" ones included, its samples' SM clock 1980 MHz) and
// the ceiling has an L2 bandwidth, so every profile figure has a value; the
// fa2_mma row has its energy measured (tests/roofline/energy_readings.hpp).
cfr::Report every_kernel_report();

// results/h200/ceilings.json with every figure's energy measured as
// tests/roofline/energy_readings.hpp's measured_ceiling_energy records it:
// 3 s over 1500 launches of 2 ms at the figure's median rate, at 600 W for
// the bandwidths, 690 W for the tensor peaks and 400 W for the SIMT ones.
cfr::CeilingsReport energy_ceilings();

// The same grid as `model` writes it: no device, timing or achieved figures.
cfr::Report model_report();

// Replaces the raw samples of row `index` (and its summary and achieved
// figures, as a new sweep would write them).
void set_row_samples(cfr::Report& report, std::size_t index, std::vector<double> samples_ms);

// Scales every sample of row `index` (and its summary and achieved figures,
// as a new sweep would write them) by `factor`.
void scale_row_time(cfr::Report& report, std::size_t index, double factor);

// configs/historical/v0.4.0.json, parsed.
cfr::evidence::HistoricalTable seed_table();
// Its rows for one GPU ("V100", "A100" or "H100") as a report.
cfr::Report seed_report(const std::string& gpu);

// A peer's raw samples (schema cuflash-roofline/raw-samples/v1) on one H200:
// torch_sdpa_flash and torch_sdpa_math (arithmetic fp32_simt) timed at B=1
// H=8 N=1024 d=64 fp16 (samples 0.022, 0.020, 0.021 ms, O checked and within
// fp16's bounds), and flash skipped at bf16 ("torch refused: no kernel").
nlohmann::json peer_raw_samples();
// Its parts, to build variants.
nlohmann::json raw_problem(const char* dtype, std::int64_t seq_len);
nlohmann::json raw_passing_check();
nlohmann::json raw_timing(std::vector<double> samples);
// The gradients a backward row checks, dQ, dK and dV, each with
// raw_passing_check's errors.
nlohmann::json raw_backward_check();
// peer_raw_samples() with the backward timed too: flash's forward row of fp16
// N 1024, then its backward ("direction": "backward"), the backward of the
// same problem under GQA (8 query heads over 2 K/V heads), and one over 2048
// keys, which the backward models do not describe.
nlohmann::json peer_backward_raw_samples();

// A file of the source tree (defined in tests/app/cli_runner.cpp, which every
// binary using these reports links).
std::string source_path(const std::string& relative);
