#include "roofline/report/report_values.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "roofline/model/gpu_table.hpp"
#include "roofline/model/roofline_model.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr {

namespace {

class Checker {
 public:
  explicit Checker(std::string path) : path_(std::move(path)) {}

  Checker at(std::string_view key) const {
    return Checker(path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key));
  }
  Checker index(std::size_t i) const { return Checker(fmt::format("{}[{}]", path_, i)); }

  void positive(double x) const {
    if (!(x > 0) || !std::isfinite(x)) fail(fmt::format("must be positive, found {}", x));
  }
  void not_negative(double x) const {
    if (!(x >= 0) || !std::isfinite(x)) fail(fmt::format("must not be negative, found {}", x));
  }
  [[noreturn]] void fail(std::string_view problem) const {
    throw InputError(fmt::format("{}: {}", path_, problem));
  }

 private:
  std::string path_;
};

// A kernel name is printed in tables, Markdown and messages: a control
// character (a newline, ESC) would split a row or reach the terminal raw.
void check_kernel_name(const std::string& name, const Checker& at) {
  if (name.empty()) at.fail("must not be empty");
  for (std::size_t position = 0; position < name.size(); ++position) {
    const auto byte = static_cast<unsigned char>(name[position]);
    if (byte < 0x20 || byte == 0x7f) {
      at.fail(
          fmt::format("has a control character (byte 0x{:02x}) at position {}", byte, position));
    }
  }
}

void check_timing(const Timing& t, const Checker& at) {
  for (std::size_t i = 0; i < t.samples_ms.size(); ++i) {
    at.at("samples_ms").index(i).positive(t.samples_ms[i]);
  }
  at.at("warmup").not_negative(t.warmup);
  at.at("throttled_discarded").not_negative(t.throttled_discarded);
  if (t.throttle_threshold_percent) {
    at.at("throttle_threshold_percent").not_negative(*t.throttle_threshold_percent);
  }
  at.at("sm_clock_MHz").not_negative(t.sm_clock_MHz);
  at.at("sm_clock_min_MHz").not_negative(t.sm_clock_min_MHz);
}

// Every number the figure table stores in a row (FLOPs, bytes, AI, times,
// rates, fractions) is a count or a ratio of counts: none is negative, but
// for the signed ones (a model's error).
void check_figures(const ResultRow& row, const Checker& at) {
  for (const Figure& figure : row_figures()) {
    if (figure.view() || figure.word() || figure.may_be_negative) continue;
    if (const auto value = figure_number(figure, row)) at.at(figure.json).not_negative(*value);
  }
  if (row.model) {
    for (const TensorBytes& entry : row.model->traffic.breakdown) {
      at.at("traffic.breakdown").at(entry.tensor).not_negative(entry.bytes);
    }
  }
}

void check_row(const ResultRow& row, const Checker& at) {
  const AttentionProblem& p = row.problem;
  for (const auto& [key, value] : {std::pair{"batch", p.batch},
                                   {"heads", p.heads},
                                   {"seq_len", p.seq_len},
                                   {"head_dim", p.head_dim},
                                   {"kv_len", p.keys()},
                                   {"kv_heads", p.key_heads()}}) {
    if (value < 1) at.at(key).fail(fmt::format("must be at least 1, found {}", value));
  }
  if (p.kv_len < 0) at.at("kv_len").fail(fmt::format("must be at least 1, found {}", p.kv_len));
  if (p.kv_heads < 0) {
    at.at("kv_heads").fail(fmt::format("must be at least 1, found {}", p.kv_heads));
  }
  if (p.page_size < 0)
    at.at("page_size").fail(fmt::format("must be at least 0, found {}", p.page_size));
  if (p.key_heads() >= 1 && p.heads % p.key_heads() != 0) {
    at.at("kv_heads").fail(fmt::format("{} does not divide heads = {}", p.key_heads(), p.heads));
  }
  if (row.tile.br != 0 || row.tile.bc != 0) {
    at.at("tile.br").positive(row.tile.br);
    at.at("tile.bc").positive(row.tile.bc);
  }
  if (row.device) at.at("device").not_negative(*row.device);
  check_figures(row, at);
  if (row.timing) check_timing(*row.timing, at.at("timing"));
  if (row.correctness) {
    const Correctness& c = *row.correctness;
    at.at("correctness.rel_l2_err").not_negative(c.rel_l2_err);
    at.at("correctness.max_abs_err").not_negative(c.max_abs_err);
    at.at("correctness.tolerance").not_negative(c.tolerance);
  }
}

}  // namespace

void check_ceiling_values(const CeilingRecord& ceiling, std::string_view path) {
  const Checker at{std::string(path)};
  at.at("bandwidth_GBps").positive(ceiling.bandwidth_GBps);
  if (ceiling.read_bandwidth_GBps)
    at.at("read_bandwidth_GBps").positive(*ceiling.read_bandwidth_GBps);
  if (ceiling.shared_memory_GBps) at.at("shared_memory_GBps").positive(*ceiling.shared_memory_GBps);
  for (const auto& [figure, value] : ceiling.instruction_TFLOPs) {
    at.at("instruction_TFLOPs").at(figure).positive(value);
  }
  for (ComputeUnit unit : all_compute_units) {
    const auto peak = ceiling.peak(unit);
    if (!peak) continue;
    const Checker peak_at = at.at("peak_TFLOPs").at(to_string(unit));
    peak_at.positive(*peak);
    // Every memory roof meets this peak at a finite ridge.
    for (MemoryRoof roof : {MemoryRoof::dram, MemoryRoof::dram_read}) {
      const double ridge = cfr::ridge(*peak, ceiling.bandwidth(roof));
      if (!std::isfinite(ridge) || !(ridge > 0)) {
        peak_at.fail(fmt::format("{:g} TFLOP/s over {:g} GB/s gives a ridge of {:g} FLOP/byte",
                                 *peak, ceiling.bandwidth(roof), ridge));
      }
    }
  }
}

void check_report_values(const Report& report) {
  const Checker top{""};
  for (std::size_t i = 0; i < report.devices.size(); ++i) {
    const DeviceRecord& d = report.devices[i];
    const Checker at = top.at("devices").index(i);
    at.at("index").not_negative(d.index);
    at.at("sm_count").not_negative(d.sm_count);
    if (d.sm_count > max_sm_count) {
      at.at("sm_count")
          .fail(fmt::format("must be at most {:g}, found {}", max_sm_count, d.sm_count));
    }
    at.at("l2_bytes").not_negative(d.l2_bytes);
    at.at("memory_bytes").not_negative(d.memory_bytes);
    at.at("clock_MHz").not_negative(d.clock_MHz);
    at.at("memory_clock_MHz").not_negative(d.memory_clock_MHz);
  }
  check_ceiling_values(report.ceiling, "ceiling");
  // One row per configuration and device: a second row of the same one would
  // pair with nothing in `compare` and hide behind the first (a regression
  // listed as "only in new" passes a gate).
  std::map<std::pair<RowIdentity, std::optional<int>>, std::size_t> seen;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    const Checker at = top.at("results").index(i);
    check_kernel_name(row.kernel, at.at("kernel"));
    check_row(row, at);
    const auto [first, fresh] = seen.emplace(std::pair{RowIdentity(row), row.device}, i);
    if (!fresh) {
      at.fail(fmt::format("repeats results[{}]: {}{}", first->second, row_label(row),
                          row.device ? fmt::format(" on device {}", *row.device) : ""));
    }
  }
}

}  // namespace cfr
