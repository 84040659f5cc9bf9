#pragma once

// The report, schema "cuflash-roofline/report/v1" (docs/report-schema.md).
// Every printer and checker reads these structs; report_json.cpp maps them to
// and from JSON, and figures.hpp lists the figures of a row.

#include <array>
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/attention_problem.hpp"
#include "roofline/core/compute_unit.hpp"
#include "roofline/core/dtype.hpp"
#include "roofline/core/statistics.hpp"
#include "roofline/model/check_sample.hpp"
#include "roofline/model/flop_model.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/model/roofline_model.hpp"
#include "roofline/model/traffic_model.hpp"
#include "roofline/report/row_energy.hpp"
#include "roofline/report/row_profile.hpp"

namespace cfr {

inline constexpr std::string_view report_schema = "cuflash-roofline/report/v1";

struct ToolInfo {
  std::string name = "cuflash-roofline";
  std::string version;
  std::string git_commit;
  bool git_dirty = true;
  std::string build_type;
  std::string cuda_archs;
};

enum class ProvenanceSource { model, measured, historical };
std::string_view to_string(ProvenanceSource source);

// A kernel a plugin brought to the run (`--plugin`, docs/plugins.md): which
// file it came from, exactly, and the version its description gives.
struct PluginKernelRecord {
  std::string kernel;  // as in results[].kernel
  std::string version;
  std::string file;    // the path given to --plugin
  std::string sha256;  // of that file when it was loaded

  friend bool operator==(const PluginKernelRecord&, const PluginKernelRecord&) = default;
};

struct Provenance {
  ProvenanceSource source = ProvenanceSource::model;
  bool auditable = false;
  std::vector<std::string> reasons;  // why it is not auditable, and other warnings
  std::string created_utc;
  std::string command;
  std::string host;
  std::vector<PluginKernelRecord> plugins;  // empty without --plugin
  // The software a peer script measured with, name -> version ("torch" ->
  // "2.11.0+cu130"); empty for the tool's own reports, whose software is its
  // commit.
  std::map<std::string, std::string> environment;
};

struct DeviceRecord {
  int index = 0;
  std::string name;
  std::string cc;
  int sm_count = 0;
  double l2_bytes = 0;
  double memory_bytes = 0;
  double clock_MHz = 0;
  double memory_clock_MHz = 0;
  std::string driver;
  std::string runtime;
  std::string pci_bus_id;
};

// The memory slope a row is judged on (docs/model.md §3): the ceiling's DRAM
// bandwidth (a copy's bytes read + written, or the datasheet's figure), or
// its DRAM read bandwidth (a read-only stream), which a kernel whose traffic
// is a read stream is judged on where the ceiling has one (memory_roof,
// row_model.hpp).
enum class MemoryRoof { dram, dram_read };
std::string_view to_string(MemoryRoof roof);
std::optional<MemoryRoof> parse_memory_roof(std::string_view text);

// The roof a report is judged against.
struct CeilingRecord {
  std::string gpu;            // table id, e.g. "a100"
  std::string gpu_name;       // e.g. "NVIDIA A100-SXM4-80GB"
  std::string source;         // "datasheet" or "measured"
  std::string source_detail;  // the table or ceilings file, and the figure's document
  double bandwidth_GBps = 0;
  // L2 bandwidth measured by `ceilings`; no datasheet states one. The L2
  // roof of a profiled row needs it.
  std::optional<double> l2_bandwidth_GBps;
  // DRAM read bandwidth measured by `ceilings` (its dram_read_bandwidth
  // figure); no datasheet states one. The roof of a read-stream kernel.
  std::optional<double> read_bandwidth_GBps;
  std::array<std::optional<double>, all_compute_units.size()> peak_TFLOPs;
  // Each instruction's measured peak, by its `ceilings` figure
  // ("fp16_tensor_mma": 650.2, "fp32_simt_fma": ...): the roofs a row is
  // judged against beside its unit's peak (docs/model.md §8.3). Empty for a
  // datasheet ceiling and for a ceilings file without them.
  std::map<std::string, double, std::less<>> instruction_TFLOPs;
  // Shared-memory bandwidth measured by `ceilings` (all SMs together); empty
  // without it.
  std::optional<double> shared_memory_GBps;
  // False when the ceiling is another GPU's than the measuring device's;
  // empty when nothing was measured.
  std::optional<bool> matches_device;

  std::optional<double> peak(ComputeUnit unit) const {
    return peak_TFLOPs[static_cast<std::size_t>(unit)];
  }
  // The slope of `roof`: the read bandwidth for dram_read where there is
  // one, otherwise bandwidth_GBps.
  double bandwidth(MemoryRoof roof) const {
    return roof == MemoryRoof::dram_read ? read_bandwidth_GBps.value_or(bandwidth_GBps)
                                         : bandwidth_GBps;
  }
};

enum class RowStatus { ok, skipped, failed };
std::string_view to_string(RowStatus status);
std::optional<RowStatus> parse_row_status(std::string_view text);

struct Timing {
  std::vector<double> samples_ms;
  int warmup = 0;
  // Of samples_ms (the timing.median_ms ... q3_ms keys); a historical row has
  // only the printed time, as the median.
  SampleSummary summary;
  bool l2_flush = true;
  // How the L2 was flushed: "read" (clean lines left behind) or "memset"
  // (dirty lines, nvbench's way); empty without a flush and in reports older
  // than the choice, which flushed by memset.
  std::string l2_flush_mode;
  double sm_clock_MHz = 0;
  double sm_clock_min_MHz = 0;
  bool throttled = false;
  int throttled_discarded = 0;
  // The --throttle-threshold the samples were judged by (% of the device's
  // max SM clock; 0: none); empty in reports older than the option.
  std::optional<double> throttle_threshold_percent;
  // Every sample read throttled and too few others were left: the throttled
  // ones were kept rather than report nothing (the cold timer's fallback).
  bool kept_throttled = false;
  bool noise_target_met = false;
  std::string stop_reason;
};

struct Achieved {
  double TFLOPs = 0;                 // counted FLOPs (the report's convention) / median time
  double bandwidth_GBps = 0;         // DRAM model bytes / median time
  double bandwidth_utilization = 0;  // bandwidth_GBps / ceiling bandwidth
  double fraction_of_roof = 0;       // TFLOPs / roof_TFLOPs
  // TFLOPs / the instruction's roof; empty without one.
  std::optional<double> fraction_of_instruction_roof;
};

struct TensorError {
  std::string tensor;  // "O", "LSE", "dQ", ...
  double rel_l2_err = 0;
  double max_abs_err = 0;
};

struct Correctness {
  std::string reference;  // what the output was compared with
  double rel_l2_err = 0;  // worst tensor
  double max_abs_err = 0;
  double tolerance = 0;  // on rel_l2_err
  bool passed = false;
  std::vector<TensorError> tensors;
  // The rows compared when not every row was (a sub-sampled check,
  // roofline/model/check_sample.hpp); empty when every row was.
  std::optional<CheckSample> sample;
};

// A historical row's figures exactly as its source document printed them
// (configs/historical/). Not evidence: `audit` checks them against each other
// and against our models.
struct ClaimedFigures {
  std::string source;  // the document and table they were copied from
  double time_ms = 0;
  double flops_G = 0;
  double TFLOPs = 0;
  double traffic_GB = 0;
  double bandwidth_GBps = 0;
  double bandwidth_utilization_percent = 0;
  double ai_eff = 0;          // FLOP/byte
  std::string regime;         // as worded by the source
  double ridge_distance = 0;  // "N x below the ridge"
};

// The roof of the instruction a row's kernel issues (instruction_roof.hpp):
// the `ceilings` figure it comes from and min(that peak, bandwidth x AI).
struct InstructionRoof {
  std::string figure;  // "fp16_tensor_mma"
  double TFLOPs = 0;
};

// Bytes one traffic model predicts for a row.
struct ModelBytes {
  TrafficModelKind model = TrafficModelKind::compulsory;
  double bytes = 0;
};

// The model half of a row (model_figures in row_model.hpp).
struct ModelFigures {
  FlopCounts flops;
  TrafficEstimate traffic;  // the kernel's own traffic model, per tensor
  // Every traffic model that applies to the kernel (traffic_models_for).
  std::vector<ModelBytes> bytes_by_model;
  // The model whose bytes ai, the roof and achieved bandwidth use: l2_aware
  // where it applies (l2_inputs is then set), else the kernel's own.
  TrafficModelKind dram_model = TrafficModelKind::compulsory;
  // The ceiling's bandwidth the roof, ridge and bandwidth utilization use;
  // empty in a report written before the field, whose rows all used dram.
  std::optional<MemoryRoof> memory_roof;
  MemoryRoof memory_roof_used() const { return memory_roof.value_or(MemoryRoof::dram); }
  // The GPU figures the l2_aware bytes were computed with (traffic.l2_model).
  std::optional<L2ModelInputs> l2_inputs;
  double ai = 0;  // counted FLOPs / dram_bytes()
  // Empty when the ceiling has no peak for the row's compute unit.
  std::optional<RooflinePoint> roofline;
  // Empty when the kernel names no instruction or the ceiling has no figure
  // for it (every datasheet ceiling).
  std::optional<InstructionRoof> instruction_roof;
  // The L2-aware model's interval of DRAM bytes (l2_aware_interval) and
  // what it gives: AI from counted FLOPs over the high and the low bytes, and
  // the verdict of that AI interval against the ridge. Empty where the
  // L2-aware model does not apply (and, for the verdict, without a roofline).
  std::optional<DramInterval> dram_interval;
  std::optional<double> ai_low;
  std::optional<double> ai_high;
  std::optional<IntervalRegime> interval_regime;

  std::optional<double> bytes_of(TrafficModelKind model) const;
  // The bytes of dram_model (traffic.bytes when it is the kernel's own).
  double dram_bytes() const;
  void set_bytes_of(TrafficModelKind model, double bytes);
};

// What makes a row one configuration: `compare` matches rows on it, and
// row_label names it. ResultRow is one, so the identity is declared once.
struct RowIdentity {
  std::string kernel;
  Direction direction = Direction::forward;
  AttentionProblem problem;

  friend auto operator<=>(const RowIdentity&, const RowIdentity&) = default;
};

// "fa1_wmma forward fp16 B=1 H=8 N=1024 d=64 causal": how every tool names a row.
std::string row_label(const RowIdentity& row);
// "results[3] (fa1_wmma forward ...)": a row of a report, in findings and reasons.
std::string row_location(std::size_t index, const RowIdentity& row);

struct ResultRow : RowIdentity {
  // The catalog kernel's build the row ran (KernelDescription::revision),
  // written where the kernel lists earlier builds; none: the oldest listed.
  std::optional<int> kernel_revision;
  TileShape tile;
  ComputeUnit compute_unit = ComputeUnit::fp32_simt;
  RowStatus status = RowStatus::ok;
  std::string reason;
  // Empty when the row stopped before the model (an unsupported dtype or head dim).
  std::optional<ModelFigures> model;
  std::optional<int> device;
  std::optional<Timing> timing;
  std::optional<Achieved> achieved;
  std::optional<Correctness> correctness;
  std::optional<ClaimedFigures> claimed;
  // Nsight Compute's counters for the row (sweep --profile).
  std::optional<Profile> profile;
  // The board's energy counter around the row's launches (sweep --energy).
  std::optional<Energy> energy;
};

struct Report {
  std::string schema{report_schema};
  ToolInfo tool;
  Provenance provenance;
  std::vector<DeviceRecord> devices;
  CeilingRecord ceiling;
  std::vector<ResultRow> results;
};

// The device record a row ran on; null for a model row or an index the
// report does not record.
const DeviceRecord* device_of(const Report& report, const ResultRow& row);

}  // namespace cfr
