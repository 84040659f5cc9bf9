#include "claimed_figures_check.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "printed_interval.hpp"

namespace cfr::evidence {

namespace {

constexpr double giga = 1e9;
// GFLOP per ms and GB per ms are 10^12 per second; TFLOP/s per GB/s is
// 1000 FLOP per byte.
constexpr double per_ms_to_per_s = 1e3;

std::string bytes_text(double bytes) {
  if (std::fabs(bytes) >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (std::fabs(bytes) >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} kB", bytes / 1e3);
}

// `interval` grown by the rounding of a printed column derived from it.
Interval widened(Interval interval, double printed_value) {
  const double half_unit = printed(printed_value).hi - printed_value;
  return {interval.lo - half_unit, interval.hi + half_unit};
}

class ClaimChecker {
 public:
  ClaimChecker(const ResultRow& row, const CeilingRecord& ceiling, std::string_view where)
      : row_(row), model_(*row.model), c_(*row.claimed), ceiling_(ceiling), where_(where) {}

  std::vector<Finding> run() {
    check_flops();
    check_tflops();
    check_traffic();
    check_bandwidth();
    check_utilization();
    check_ai();
    check_ridge_distance();
    check_regime();
    check_time_against_roof();
    return findings_;
  }

 private:
  void add(std::string message) {
    findings_.push_back({FindingKind::claim, std::string(where_), std::move(message)});
  }

  void check_flops() {
    const Interval claimed = printed(c_.flops_G);
    const double dense = model_.flops.dense / giga;
    const double exact_count = model_.flops.exact / giga;
    const double half = model_.flops.half / giga;
    if (claimed.contains(exact_count) || claimed.contains(half)) return;
    if (row_.problem.causal && claimed.contains(dense)) {
      add(fmt::format(
          "flops_G: {:g} GFLOP is the dense count ({:.4g}, every query-key pair) for a row "
          "labelled causal; the causal counts are {:.4g} (exact) and {:.4g} (dense / 2)",
          c_.flops_G, dense, exact_count, half));
      return;
    }
    add(
        fmt::format("flops_G: {:g} GFLOP matches none of our counts: dense {:.4g}, exact {:.4g}, "
                    "dense / 2 {:.4g}",
                    c_.flops_G, dense, exact_count, half));
  }

  void check_tflops() {
    const Interval own = printed(c_.flops_G) / printed(c_.time_ms);
    const Interval claimed = printed(c_.TFLOPs);
    if (claimed.overlaps(own)) return;
    const double own_value = c_.flops_G / c_.time_ms;
    const Interval halved = own * exact(0.5);
    add(fmt::format(
        "TFLOPs: the table prints {:g} TFLOP/s, but its own FLOPs / time is {:g} GFLOP / {:g} ms "
        "= {:.3g} TFLOP/s (printed / derived = {:.2f}); FLOPs / 2 / time = {:.3g} {}",
        c_.TFLOPs, c_.flops_G, c_.time_ms, own_value, c_.TFLOPs / own_value, own_value / 2,
        claimed.overlaps(halved) ? "matches it" : "does not match it either"));
  }

  void check_traffic() {
    const Interval claimed = printed(c_.traffic_GB) * exact(giga);
    const double compulsory = model_.traffic.compulsory_bytes;
    const double model = model_.traffic.bytes;
    if (claimed.contains(compulsory) || claimed.contains(model)) return;
    add(fmt::format(
        "traffic_GB: the table's 'theoretical HBM traffic' {:g} GB matches no byte model: "
        "compulsory (Q, K, V, O once) {} (printed / model = {:.3g}), {} (Br={}, Bc={}) {} "
        "(printed / model = {:.3g})",
        c_.traffic_GB, bytes_text(compulsory), c_.traffic_GB * giga / compulsory,
        to_string(model_.traffic.model), row_.tile.br, row_.tile.bc, bytes_text(model),
        c_.traffic_GB * giga / model));
  }

  void check_bandwidth() {
    const Interval own = printed(c_.traffic_GB) / printed(c_.time_ms) * exact(per_ms_to_per_s);
    if (printed(c_.bandwidth_GBps).overlaps(own)) return;
    const double own_value = c_.traffic_GB / c_.time_ms * per_ms_to_per_s;
    add(fmt::format(
        "bandwidth_GBps: the table prints {:g} GB/s, but its own traffic / time is {:g} GB / "
        "{:g} ms = {:.3g} GB/s (printed / derived = {:.3g})",
        c_.bandwidth_GBps, c_.traffic_GB, c_.time_ms, own_value, c_.bandwidth_GBps / own_value));
  }

  void check_utilization() {
    if (ceiling_.bandwidth_GBps <= 0) return;
    const Interval own = printed(c_.bandwidth_GBps) / exact(ceiling_.bandwidth_GBps) * exact(100);
    if (printed(c_.bandwidth_utilization_percent).overlaps(own)) return;
    add(fmt::format(
        "bandwidth_utilization_percent: the table prints {:g}%, but {:g} GB/s of the {} "
        "ceiling's {:g} GB/s is {:.3g}%",
        c_.bandwidth_utilization_percent, c_.bandwidth_GBps, ceiling_.gpu, ceiling_.bandwidth_GBps,
        c_.bandwidth_GBps / ceiling_.bandwidth_GBps * 100));
  }

  void check_ai() {
    const Interval claimed = printed(c_.ai_eff);
    const Interval from_rates = printed(c_.TFLOPs) / printed(c_.bandwidth_GBps) * exact(1e3);
    if (!claimed.overlaps(from_rates)) {
      add(fmt::format(
          "ai_eff: the table prints {:g} FLOP/byte, but its TFLOP/s / bandwidth is "
          "{:g} / {:g} GB/s = {:.3g}",
          c_.ai_eff, c_.TFLOPs, c_.bandwidth_GBps, c_.TFLOPs / c_.bandwidth_GBps * 1e3));
    }
    // AI_eff is also FLOPs / traffic when both rates use the same time. A
    // table computes it through its rounded TFLOPS and bandwidth columns, so
    // each step may round once more.
    const Interval rate = widened(printed(c_.flops_G) / printed(c_.time_ms), c_.TFLOPs);
    const Interval bandwidth = widened(
        printed(c_.traffic_GB) / printed(c_.time_ms) * exact(per_ms_to_per_s), c_.bandwidth_GBps);
    const Interval from_counts = widened(rate / bandwidth * exact(1e3), c_.ai_eff);
    if (!claimed.overlaps(from_counts)) {
      add(fmt::format(
          "ai_eff: the table prints {:g} FLOP/byte, but its own FLOPs / traffic is {:g} GFLOP / "
          "{:g} GB = {:.3g}; our model puts this row at {:.3g} ({} bytes, {} FLOPs)",
          c_.ai_eff, c_.flops_G, c_.traffic_GB, c_.flops_G / c_.traffic_GB, model_.ai,
          to_string(model_.traffic.model), to_string(model_.flops.convention)));
    }
  }

  void check_ridge_distance() {
    if (!model_.roofline) return;
    const double row_ridge = model_.roofline->ridge;
    const Interval implied = printed(c_.ridge_distance) * printed(c_.ai_eff);
    if (implied.contains(row_ridge)) return;
    std::string matching;
    for (ComputeUnit unit : all_compute_units) {
      const auto peak = ceiling_.peak(unit);
      if (!peak || ceiling_.bandwidth_GBps <= 0) continue;
      const double unit_ridge = ridge(*peak, ceiling_.bandwidth_GBps);
      if (implied.contains(unit_ridge)) {
        matching = fmt::format("; it is the {} ridge ({:g} TFLOP/s / {:g} GB/s = {:.3g})",
                               to_string(unit), *peak, ceiling_.bandwidth_GBps, unit_ridge);
      }
    }
    add(fmt::format(
        "ridge_distance: {:g}x below the ridge at AI_eff {:g} puts the table's ridge at {:.3g} "
        "FLOP/byte, but the {} {} ridge of this report is {:.4g}{}",
        c_.ridge_distance, c_.ai_eff, c_.ridge_distance * c_.ai_eff, ceiling_.gpu,
        to_string(row_.compute_unit), row_ridge, matching));
  }

  void check_regime() {
    if (!model_.roofline) return;
    const RooflinePoint& roof = *model_.roofline;
    const bool says_memory_bound = c_.regime.find("memory") != std::string::npos;
    if (says_memory_bound == (roof.regime == Regime::memory_bound)) return;
    add(fmt::format("regime: the table says '{}', our model says {} (AI {:.3g}, ridge {:.4g})",
                    c_.regime, to_string(roof.regime), model_.ai, roof.ridge));
  }

  void check_time_against_roof() {
    if (!model_.roofline) return;
    const double roof_time_ms = model_.roofline->roof_time_ms;
    if (printed(c_.time_ms).hi >= roof_time_ms) return;
    add(
        fmt::format("time_ms: {:g} ms is faster than the roofline allows ({:.4g} ms at the {} "
                    "ceiling)",
                    c_.time_ms, roof_time_ms, ceiling_.gpu));
  }

  const ResultRow& row_;
  const ModelFigures& model_;
  const ClaimedFigures& c_;
  const CeilingRecord& ceiling_;
  std::string_view where_;
  std::vector<Finding> findings_;
};

}  // namespace

std::vector<Finding> check_claimed_figures(const ResultRow& row, const CeilingRecord& ceiling,
                                           std::string_view where) {
  if (!row.claimed || !row.model) return {};
  return ClaimChecker(row, ceiling, where).run();
}

}  // namespace cfr::evidence
