#pragma once

// The empirical roofline of one GPU as `cuflash-roofline ceilings` writes it
// (schema "cuflash-roofline/ceilings/v1"), and how a sweep turns it into the
// roof it is judged against.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/core/errors.hpp"
#include "roofline/report/ceiling_energy.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

inline constexpr std::string_view ceilings_schema = "cuflash-roofline/ceilings/v1";
// The figure of the read-only stream (kernels/ceilings/read_bandwidth.cu);
// files written before it have none.
inline constexpr std::string_view dram_read_figure = "dram_read_bandwidth";
// The shared-memory stream (kernels/ceilings/shared_bandwidth.cu).
inline constexpr std::string_view shared_memory_figure = "shared_memory_bandwidth";

struct CeilingFigure {
  std::string figure;  // "dram_bandwidth", "fp16_tensor_cublas", ...
  std::string unit;    // "GB/s" or "TFLOP/s"
  double value = 0;    // median of samples
  std::vector<double> samples;
  std::string method;
  std::optional<ComputeUnit> compute_unit;  // empty for bandwidths
  std::optional<double> datasheet_value;    // the GPU table's figure it is compared with
  // As read from a file (for `audit`); to_json writes fraction_of_datasheet().
  std::optional<double> reported_fraction_of_datasheet;
  double sm_clock_MHz = 0;
  // `ceilings --energy`: the board's energy around a run of the figure's
  // launch (ceiling_energy.hpp); absent without the flag.
  std::optional<CeilingEnergy> energy;
};

// value / datasheet_value; empty without a datasheet figure (L2 bandwidth).
std::optional<double> fraction_of_datasheet(const CeilingFigure& figure);

struct CeilingsReport {
  std::string schema{ceilings_schema};
  ToolInfo tool;
  Provenance provenance;
  DeviceRecord device;
  std::string datasheet_gpu;  // GPU table id the fractions refer to
  std::vector<CeilingFigure> figures;

  const CeilingFigure* find(std::string_view figure) const;
  // Highest measured peak of a compute unit over its methods.
  std::optional<double> best_peak(ComputeUnit unit) const;
  // The dram_read_bandwidth figure's value; empty without one.
  std::optional<double> read_bandwidth() const;
  // `ceilings --energy`: the highest FLOP/J over a compute unit's figures,
  // and the B/J of the DRAM copy (dram_bandwidth, the figure the roofline's
  // DRAM slope is); empty where no such figure has energy figures.
  std::optional<double> best_flop_per_J(ComputeUnit unit) const;
  std::optional<double> dram_bytes_per_J() const;
};

nlohmann::json to_json(const CeilingsReport& report);
// Throws InputError naming the key path.
CeilingsReport ceilings_from_json(const nlohmann::json& document);

// The text table `ceilings` prints and `table` prints of a ceilings file:
// one line per figure with its median, datasheet figure, ratio and samples;
// where figures have energy, a second table of their energy figures (or the
// reason they have none).
std::string render_ceilings_table(const CeilingsReport& report);

// The roof a sweep uses with --ceiling measured|FILE: measured DRAM bandwidth
// (the copy's, and the read stream's where the file has it), the best
// measured peak per unit, every compute figure as an instruction's roof and
// the shared-memory bandwidth where the file has them; a unit nobody measured keeps the datasheet
// figure, and source_detail says which. No datasheet states a read bandwidth: without the figure
// the record has none.
CeilingRecord measured_ceiling_record(const CeilingsReport& measured,
                                      const CeilingRecord& datasheet, std::string_view origin);

}  // namespace cfr
