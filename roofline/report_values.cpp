#include "report_values.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "report_json.hpp"
#include "roofline_model.hpp"

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
    throw ReportError(fmt::format("{}: {}", path_, problem));
  }

 private:
  std::string path_;
};

void check_timing(const Timing& t, const Checker& at) {
  for (std::size_t i = 0; i < t.samples_ms.size(); ++i) {
    at.at("samples_ms").index(i).positive(t.samples_ms[i]);
  }
  at.at("warmup").not_negative(t.warmup);
  at.at("throttled_discarded").not_negative(t.throttled_discarded);
  for (const auto& [key, value] : {std::pair{"median_ms", t.median_ms},
                                   {"min_ms", t.min_ms},
                                   {"max_ms", t.max_ms},
                                   {"mean_ms", t.mean_ms},
                                   {"stdev_ms", t.stdev_ms},
                                   {"q1_ms", t.q1_ms},
                                   {"q3_ms", t.q3_ms},
                                   {"sm_clock_MHz", t.sm_clock_MHz},
                                   {"sm_clock_min_MHz", t.sm_clock_min_MHz}}) {
    at.at(key).not_negative(value);
  }
}

void check_model_figures(const ResultRow& row, const Checker& at) {
  for (const auto& [key, value] : {std::pair{"flops.dense", row.flops.dense},
                                   {"flops.exact", row.flops.exact},
                                   {"flops.half", row.flops.half},
                                   {"flops.softmax", row.flops.softmax},
                                   {"traffic.bytes", row.traffic.bytes},
                                   {"traffic.compulsory_bytes", row.traffic.compulsory_bytes},
                                   {"ai", row.ai}}) {
    at.at(key).not_negative(value);
  }
  for (const TensorBytes& entry : row.traffic.breakdown) {
    at.at("traffic.breakdown").at(entry.tensor).not_negative(entry.bytes);
  }
}

void check_row(const ResultRow& row, const Checker& at) {
  for (const auto& [key, value] : {std::pair{"batch", row.batch},
                                   {"heads", row.heads},
                                   {"seq_len", row.seq_len},
                                   {"head_dim", row.head_dim}}) {
    if (value < 1) at.at(key).fail(fmt::format("must be at least 1, found {}", value));
  }
  if (row.tile.br != 0 || row.tile.bc != 0) {
    at.at("tile.br").positive(row.tile.br);
    at.at("tile.bc").positive(row.tile.bc);
  }
  if (row.device) at.at("device").not_negative(*row.device);
  check_model_figures(row, at);
  if (row.timing) check_timing(*row.timing, at.at("timing"));
  if (row.achieved) {
    const Achieved& a = *row.achieved;
    for (const auto& [key, value] : {std::pair{"TFLOPs", a.TFLOPs},
                                     {"bandwidth_GBps", a.bandwidth_GBps},
                                     {"bandwidth_utilization", a.bandwidth_utilization},
                                     {"fraction_of_roof", a.fraction_of_roof}}) {
      at.at("achieved").at(key).not_negative(value);
    }
  }
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
  for (ComputeUnit unit : all_compute_units) {
    const auto peak = ceiling.peak(unit);
    if (!peak) continue;
    const Checker peak_at = at.at("peak_TFLOPs").at(to_string(unit));
    peak_at.positive(*peak);
    const double ridge = ridge_point(*peak, ceiling.bandwidth_GBps);
    if (!std::isfinite(ridge) || !(ridge > 0)) {
      peak_at.fail(fmt::format("{:g} TFLOP/s over {:g} GB/s gives a ridge of {:g} FLOP/byte", *peak,
                               ceiling.bandwidth_GBps, ridge));
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
    at.at("l2_bytes").not_negative(d.l2_bytes);
    at.at("memory_bytes").not_negative(d.memory_bytes);
    at.at("clock_MHz").not_negative(d.clock_MHz);
    at.at("memory_clock_MHz").not_negative(d.memory_clock_MHz);
  }
  check_ceiling_values(report.ceiling, "ceiling");
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    check_row(report.results[i], top.at("results").index(i));
  }
}

}  // namespace cfr
