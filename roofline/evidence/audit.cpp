#include "audit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "claimed_figures_check.hpp"
#include "roofline/auditability.hpp"
#include "roofline/row_model.hpp"

namespace cfr::evidence {

namespace {

// Shapes beyond these are not attention problems anyone ran; recomputing
// them could overflow the int64 products of the models or, for the tiled
// traffic models that loop once per block, take minutes.
constexpr std::int64_t max_dimension = std::int64_t{1} << 31;
constexpr std::int64_t max_blocks_per_head = std::int64_t{1} << 22;

std::optional<std::string> why_not_recomputable(const ResultRow& row) {
  const std::array<std::pair<const char*, std::int64_t>, 4> dims{{{"batch", row.batch},
                                                                  {"heads", row.heads},
                                                                  {"seq_len", row.seq_len},
                                                                  {"head_dim", row.head_dim}}};
  for (const auto& [name, value] : dims) {
    if (value < 1 || value > max_dimension) {
      return fmt::format("{} = {} is outside 1..2^31; the row's figures were not recomputed", name,
                         value);
    }
  }
  if (row.tile.tiled()) {
    const std::int64_t smallest = std::min(row.tile.br, row.tile.bc);
    if (row.seq_len / smallest > max_blocks_per_head) {
      return fmt::format(
          "seq_len {} over a {}x{} tile is more than 2^22 blocks per head; the "
          "row's figures were not recomputed",
          row.seq_len, row.tile.br, row.tile.bc);
    }
  }
  return std::nullopt;
}

std::string number(double x) {
  return fmt::format("{:.10g}", x);
}

std::string optional_text(const std::optional<double>& x) {
  return x ? number(*x) : std::string("absent");
}

class RowAudit {
 public:
  RowAudit(const Report& report, std::size_t index, const AuditTolerance& tolerance,
           AuditResult& out)
      : report_(report),
        row_(report.results[index]),
        where_(row_location(index, row_)),
        tolerance_(tolerance),
        out_(out),
        recomputed_(row_) {}

  void run() {
    check_status();
    check_device();
    check_catalog();
    const bool model_ok = check_model();
    check_timing();
    if (model_ok) check_achieved();
    for (Finding& finding : check_claimed_figures(row_, report_.ceiling, where_)) {
      out_.findings.push_back(std::move(finding));
    }
  }

 private:
  void add(FindingKind kind, std::string message) {
    out_.findings.push_back({kind, where_, std::move(message)});
  }

  bool close(double a, double b) const {
    if (!std::isfinite(a) || !std::isfinite(b)) return a == b;
    return std::fabs(a - b) <=
           tolerance_.absolute + tolerance_.relative * std::max(std::fabs(a), std::fabs(b));
  }

  void compare(std::string_view field, double reported, double recomputed) {
    ++out_.figures_checked;
    if (close(reported, recomputed)) return;
    add(FindingKind::mismatch,
        fmt::format("{}: report {}, recomputed {}", field, number(reported), number(recomputed)));
  }

  void compare(std::string_view field, const std::optional<double>& reported,
               const std::optional<double>& recomputed) {
    if (reported && recomputed) {
      compare(field, *reported, *recomputed);
      return;
    }
    ++out_.figures_checked;
    if (reported.has_value() == recomputed.has_value()) return;
    add(FindingKind::mismatch, fmt::format("{}: report {}, recomputed {}", field,
                                           optional_text(reported), optional_text(recomputed)));
  }

  void check_status() {
    if (row_.status == RowStatus::failed) {
      add(FindingKind::note, fmt::format("status failed: {}", row_.reason));
    }
    if (row_.status == RowStatus::ok && row_.correctness && !row_.correctness->passed) {
      add(FindingKind::note, "status ok, but correctness.passed is false");
    }
    if (row_.correctness && row_.correctness->passed &&
        row_.correctness->rel_l2_err > row_.correctness->tolerance) {
      add(FindingKind::mismatch,
          fmt::format("correctness.passed: true, but rel_l2_err {} exceeds the tolerance {}",
                      number(row_.correctness->rel_l2_err), number(row_.correctness->tolerance)));
    }
  }

  void check_device() {
    if (!row_.device) return;
    const bool recorded =
        std::any_of(report_.devices.begin(), report_.devices.end(),
                    [&](const DeviceRecord& d) { return d.index == *row_.device; });
    if (!recorded) {
      add(FindingKind::mismatch,
          fmt::format("device: {} names no entry of devices[]", *row_.device));
    }
  }

  // A catalog kernel's tile, compute unit and traffic model are fixed by its
  // description; a report that says otherwise was edited or made by a tool
  // with another catalog.
  void check_catalog() {
    const KernelDescription* kernel = find_kernel(row_.kernel);
    if (kernel == nullptr || row_.head_dim < 1 || row_.head_dim > max_dimension) return;
    const int head_dim = static_cast<int>(row_.head_dim);
    if (row_.direction != kernel->direction) {
      add(FindingKind::mismatch,
          fmt::format("direction: report {}, the catalog's {} is {}", to_string(row_.direction),
                      kernel->name, to_string(kernel->direction)));
    }
    // The tile of the row's device where the report names its compute
    // capability; otherwise (a model report) any the catalog gives at d.
    const auto cc = device_compute_capability();
    const std::vector<TileShape> tiles =
        cc ? std::vector<TileShape>{kernel->tile_for(head_dim, *cc)}
           : tiles_on_any_arch(*kernel, head_dim);
    if (kernel->supports_head_dim(head_dim) &&
        std::find(tiles.begin(), tiles.end(), row_.tile) == tiles.end()) {
      std::vector<std::string> names;
      for (TileShape tile : tiles) names.push_back(fmt::format("{}x{}", tile.br, tile.bc));
      add(FindingKind::mismatch,
          fmt::format("tile: report {}x{}, the catalog's {} uses {} at d={}", row_.tile.br,
                      row_.tile.bc, kernel->name, fmt::join(names, " or "), head_dim));
    }
    const ComputeUnit unit = kernel->compute_unit_for(row_.dtype);
    if (row_.compute_unit != unit) {
      add(FindingKind::mismatch,
          fmt::format("compute_unit: report {}, the catalog's {} runs {} on {}",
                      to_string(row_.compute_unit), kernel->name, to_string(row_.dtype),
                      to_string(unit)));
    }
    if (has_model_figures() && row_.traffic.model != kernel->traffic) {
      add(FindingKind::mismatch,
          fmt::format("traffic.model: report {}, the catalog's {} is modelled as {}",
                      to_string(row_.traffic.model), kernel->name, to_string(kernel->traffic)));
    }
  }

  std::optional<ComputeCapability> device_compute_capability() const {
    if (!row_.device) return std::nullopt;
    for (const DeviceRecord& device : report_.devices) {
      if (device.index == *row_.device) return parse_compute_capability(device.cc);
    }
    return std::nullopt;
  }

  // report_json writes flops and traffic exactly when traffic.bytes > 0, and
  // requires them for ok rows.
  bool has_model_figures() const { return row_.status == RowStatus::ok || row_.traffic.bytes > 0; }

  // The model half of model_row, with the row's own convention, traffic
  // model, tile and compute unit. False when nothing could be recomputed.
  bool check_model() {
    if (!has_model_figures()) return false;
    if (const auto why = why_not_recomputable(row_)) {
      add(FindingKind::unverifiable, *why);
      return false;
    }
    const AttentionProblem problem = row_.problem();
    const FlopCounts flops = attention_flops(problem, row_.direction, row_.flops.convention);
    compare("flops.dense", row_.flops.dense, flops.dense);
    compare("flops.exact", row_.flops.exact, flops.exact);
    compare("flops.half", row_.flops.half, flops.half);
    compare("flops.softmax", row_.flops.softmax, flops.softmax);
    recomputed_.flops = flops;

    TrafficEstimate traffic;
    try {
      traffic = estimate_traffic(problem, row_.direction, row_.traffic.model, row_.tile);
    } catch (const std::exception& error) {
      add(FindingKind::unverifiable, fmt::format("traffic: cannot recompute with model '{}': {}",
                                                 to_string(row_.traffic.model), error.what()));
      return false;
    }
    compare("traffic.bytes", row_.traffic.bytes, traffic.bytes);
    compare("traffic.compulsory_bytes", row_.traffic.compulsory_bytes, traffic.compulsory_bytes);
    check_breakdown(traffic);
    recomputed_.traffic = traffic;

    // model_row's definition: counted FLOPs per modelled byte.
    recomputed_.ai = flops.counted() / traffic.bytes;
    compare("ai", row_.ai, recomputed_.ai);

    const auto peak = report_.ceiling.peak(row_.compute_unit);
    recomputed_.ridge.reset();
    recomputed_.ridge_distance.reset();
    recomputed_.regime.reset();
    recomputed_.roof_TFLOPs.reset();
    recomputed_.roof_time_ms.reset();
    if (peak) {
      const RooflinePoint point =
          analyze_roofline(flops.counted(), traffic.bytes, *peak, report_.ceiling.bandwidth_GBps);
      recomputed_.ridge = point.ridge;
      recomputed_.ridge_distance = point.ridge_distance;
      recomputed_.regime = point.regime;
      recomputed_.roof_TFLOPs = point.roof_TFLOPs;
      recomputed_.roof_time_ms = point.roof_time_ms;
    } else if (row_.status == RowStatus::ok) {
      add(FindingKind::mismatch,
          fmt::format("status: ok, but the ceiling {} has no {} peak (the model skips such rows)",
                      report_.ceiling.gpu, to_string(row_.compute_unit)));
    }
    compare("ridge", row_.ridge, recomputed_.ridge);
    compare("ridge_distance", row_.ridge_distance, recomputed_.ridge_distance);
    compare("roof_TFLOPs", row_.roof_TFLOPs, recomputed_.roof_TFLOPs);
    compare("roof_time_ms", row_.roof_time_ms, recomputed_.roof_time_ms);
    ++out_.figures_checked;
    if (row_.regime != recomputed_.regime) {
      add(FindingKind::mismatch,
          fmt::format("regime: report {}, recomputed {}",
                      row_.regime ? to_string(*row_.regime) : "absent",
                      recomputed_.regime ? to_string(*recomputed_.regime) : "absent"));
    }
    return true;
  }

  void check_breakdown(const TrafficEstimate& traffic) {
    std::map<std::string, double> reported;
    for (const TensorBytes& entry : row_.traffic.breakdown) reported[entry.tensor] += entry.bytes;
    for (const TensorBytes& entry : traffic.breakdown) {
      const auto it = reported.find(entry.tensor);
      const std::string field = fmt::format("traffic.breakdown.{}", entry.tensor);
      if (it == reported.end()) {
        ++out_.figures_checked;
        add(FindingKind::mismatch,
            fmt::format("{}: absent from the report, recomputed {}", field, number(entry.bytes)));
        continue;
      }
      compare(field, it->second, entry.bytes);
      reported.erase(it);
    }
    for (const auto& [tensor, bytes] : reported) {
      add(FindingKind::mismatch,
          fmt::format("traffic.breakdown.{}: report {}, but the {} model has no such tensor",
                      tensor, number(bytes), to_string(row_.traffic.model)));
    }
  }

  void check_timing() {
    if (!row_.timing) {
      if (row_.achieved) {
        add(FindingKind::mismatch, "achieved: present, but there is no timing to derive it from");
      }
      return;
    }
    if (row_.timing->samples_ms.empty()) {
      add(FindingKind::unverifiable,
          "timing: no raw samples; the median and the other summary figures cannot be "
          "recomputed");
      return;  // achieved is still checked against the reported median
    }
    Timing timing = *row_.timing;
    summarize_timing(timing);
    const Timing& r = *row_.timing;
    compare("timing.median_ms", r.median_ms, timing.median_ms);
    compare("timing.min_ms", r.min_ms, timing.min_ms);
    compare("timing.max_ms", r.max_ms, timing.max_ms);
    compare("timing.mean_ms", r.mean_ms, timing.mean_ms);
    compare("timing.stdev_ms", r.stdev_ms, timing.stdev_ms);
    compare("timing.q1_ms", r.q1_ms, timing.q1_ms);
    compare("timing.q3_ms", r.q3_ms, timing.q3_ms);
    recomputed_.timing = timing;
  }

  void check_achieved() {
    if (!row_.timing) return;
    const Achieved achieved = achieved_from(recomputed_, report_.ceiling);
    if (!row_.achieved) {
      if (row_.status == RowStatus::ok && achieved.TFLOPs > 0) {
        add(FindingKind::mismatch,
            fmt::format("achieved: absent, recomputed TFLOPs {}", number(achieved.TFLOPs)));
      }
      return;
    }
    compare("achieved.TFLOPs", row_.achieved->TFLOPs, achieved.TFLOPs);
    compare("achieved.bandwidth_GBps", row_.achieved->bandwidth_GBps, achieved.bandwidth_GBps);
    compare("achieved.bandwidth_utilization", row_.achieved->bandwidth_utilization,
            achieved.bandwidth_utilization);
    compare("achieved.fraction_of_roof", row_.achieved->fraction_of_roof,
            achieved.fraction_of_roof);
  }

  const Report& report_;
  const ResultRow& row_;
  std::string where_;
  const AuditTolerance& tolerance_;
  AuditResult& out_;
  ResultRow recomputed_;
};

void check_auditable_flag(const Report& report, AuditResult& out) {
  const std::vector<std::string> failures = auditability_failures(report);
  const Provenance& p = report.provenance;
  if (p.auditable) {
    for (const std::string& failure : failures) {
      out.findings.push_back(
          {FindingKind::auditability, "report", "provenance.auditable is true, but " + failure});
    }
    return;
  }
  if (failures.empty() && p.reasons.empty()) {
    out.findings.push_back({FindingKind::auditability, "report",
                            "provenance.auditable is false and gives no reason, yet every "
                            "condition for auditable holds"});
  }
  for (const std::string& reason : p.reasons) {
    out.findings.push_back({FindingKind::note, "report", "not auditable: " + reason});
  }
}

}  // namespace

std::size_t AuditResult::failing() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.fails(); }));
}

std::string row_location(std::size_t index, const ResultRow& row) {
  return fmt::format("results[{}] ({} {} N={} d={}{})", index, row.kernel, to_string(row.dtype),
                     row.seq_len, row.head_dim, row.causal ? " causal" : "");
}

AuditResult audit_report(const Report& report, const AuditTolerance& tolerance) {
  AuditResult result;
  result.rows = report.results.size();
  check_auditable_flag(report, result);
  if (report.results.empty()) {
    result.findings.push_back({FindingKind::note, "report", "no result rows"});
  }
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    RowAudit(report, i, tolerance, result).run();
  }
  return result;
}

std::string render_audit(const AuditResult& result, std::string_view file) {
  std::string out;
  std::map<FindingKind, std::size_t> counts;
  for (const Finding& f : result.findings) {
    out += fmt::format("{}: {}: {}: {}\n", file, to_string(f.kind), f.where, f.message);
    ++counts[f.kind];
  }
  std::string tally;
  for (const auto& [kind, count] : counts) {
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", count, to_string(kind));
  }
  out += fmt::format("{}: {}: {} rows, {} figures recomputed{}{}\n", file,
                     result.consistent() ? "consistent" : "INCONSISTENT", result.rows,
                     result.figures_checked, tally.empty() ? "" : "; ", tally);
  return out;
}

nlohmann::json to_json(const AuditResult& result) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : result.findings) {
    findings.push_back({{"kind", to_string(f.kind)},
                        {"where", f.where},
                        {"message", f.message},
                        {"fails", f.fails()}});
  }
  return {{"consistent", result.consistent()},
          {"rows", result.rows},
          {"figures_checked", result.figures_checked},
          {"findings", findings}};
}

}  // namespace cfr::evidence
