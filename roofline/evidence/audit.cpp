#include "audit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "claimed_figures_check.hpp"
#include "interval_coverage.hpp"
#include "roofline/core/statistics.hpp"
#include "roofline/model/kv_splits.hpp"
#include "roofline/model/own_byte_count.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/profile/recorded_launch.hpp"
#include "roofline/report/auditability.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/row_model.hpp"
#include "timing_coverage.hpp"

namespace cfr::evidence {

namespace {

// Shapes beyond these are not attention problems anyone ran; recomputing
// them could overflow the int64 products of the models or, for the tiled
// traffic models that loop once per block, take minutes.
constexpr std::int64_t max_dimension = std::int64_t{1} << 31;
constexpr std::int64_t max_blocks_per_head = std::int64_t{1} << 22;

std::optional<std::string> why_not_recomputable(const ResultRow& row) {
  const AttentionProblem& p = row.problem;
  const std::array<std::pair<const char*, std::int64_t>, 4> dims{
      {{"batch", p.batch}, {"heads", p.heads}, {"seq_len", p.seq_len}, {"head_dim", p.head_dim}}};
  for (const auto& [name, value] : dims) {
    if (value < 1 || value > max_dimension) {
      return fmt::format("{} = {} is outside 1..2^31; the row's figures were not recomputed", name,
                         value);
    }
  }
  if (row.tile.tiled()) {
    const std::int64_t smallest = std::min(row.tile.br, row.tile.bc);
    if (p.seq_len / smallest > max_blocks_per_head) {
      return fmt::format(
          "seq_len {} over a {}x{} tile is more than 2^22 blocks per head; the "
          "row's figures were not recomputed",
          p.seq_len, row.tile.br, row.tile.bc);
    }
  }
  return std::nullopt;
}

std::string number(double x) {
  return fmt::format("{:.10g}", x);
}

std::string text_of(const FigureValue& value) {
  if (const double* x = std::get_if<double>(&value)) return number(*x);
  if (const std::string* word = std::get_if<std::string>(&value)) return *word;
  return "absent";
}

// How the `plugin` rows' byte counts were checked, per kernel: counted again
// by its plugin, or taken as recorded.
struct OwnCountTally {
  std::map<std::string, std::size_t> counted_again;
  std::map<std::string, std::size_t> as_recorded;
};

const PluginKernelRecord* plugin_of(const Report& report, std::string_view kernel) {
  for (const PluginKernelRecord& record : report.provenance.plugins) {
    if (record.kernel == kernel) return &record;
  }
  return nullptr;
}

// One note per kernel: how its rows' traffic.bytes were checked.
void add_own_count_notes(const Report& report, const OwnCountTally& tally, AuditResult& out) {
  for (const auto& [kernel, rows] : tally.counted_again) {
    const PluginKernelRecord& plugin = *plugin_of(report, kernel);
    out.findings.push_back(
        {FindingKind::note, "report",
         fmt::format("{}: traffic.bytes of {} row(s) counted again by the plugin's hbm_bytes "
                     "(sha256 {})",
                     kernel, rows, plugin.sha256)});
  }
  for (const auto& [kernel, rows] : tally.as_recorded) {
    const PluginKernelRecord& plugin = *plugin_of(report, kernel);
    out.findings.push_back(
        {FindingKind::note, "report",
         fmt::format("{}: traffic.bytes of {} row(s) is the kernel's own count (hbm_bytes of "
                     "plugin {}, sha256 {}), taken as recorded and not counted again; `audit "
                     "--plugin {}` counts it again",
                     kernel, rows, plugin.file, plugin.sha256, plugin.file)});
  }
}

// Where the counters left the model's interval: context, not a failure (the
// interval bounds schedules, it does not promise the hardware's).
void add_interval_notes(const Report& report, AuditResult& out) {
  const IntervalCoverage coverage = interval_coverage(report);
  if (coverage.rows == 0) return;
  out.findings.push_back({FindingKind::note, "report", describe(coverage)});
  for (const IntervalMiss& miss : coverage.outside) {
    out.findings.push_back(
        {FindingKind::note, row_location(miss.row, report.results[miss.row]),
         fmt::format("ncu DRAM {:.4g} GB outside the L2-aware interval [{:.4g}, {:.4g}] GB",
                     miss.measured / 1e9, miss.interval.low / 1e9, miss.interval.high / 1e9)});
  }
}

// Where our timer and ncu's launch disagree beyond the check's 3 %, with how
// far each side's own launches spread: context, not a failure.
void add_timing_notes(const Report& report, AuditResult& out) {
  const TimingCoverage coverage = timing_coverage(report);
  if (coverage.rows == 0) return;
  out.findings.push_back({FindingKind::note, "report", describe(coverage)});
  for (const TimingMiss& miss : coverage.outside) {
    out.findings.push_back(
        {FindingKind::note, row_location(miss.row, report.results[miss.row]), describe(miss)});
  }
}

class RowAudit {
 public:
  RowAudit(const Report& report, std::size_t index, const AuditTolerance& tolerance,
           std::span<const PluginByteSource> plugins, OwnCountTally& tally, AuditResult& out)
      : report_(report),
        row_(report.results[index]),
        where_(row_location(index, row_)),
        tolerance_(tolerance),
        plugins_(plugins),
        tally_(tally),
        out_(out) {}

  // Recomputes the row through the sweep's own functions, then compares
  // every figure of the recomputed parts (row_figures()).
  void run() {
    check_status();
    check_sample();
    check_device();
    check_catalog();
    ResultRow recomputed = row_;
    const bool model_ok = recompute_model(recomputed);
    const bool timing_ok = recompute_timing(recomputed);
    const bool achieved_ok = model_ok && recompute_achieved(recomputed);
    const bool profile_ok = model_ok && recompute_profile(recomputed);
    const bool energy_ok = model_ok && recompute_energy(recomputed);
    for (const Figure& figure : row_figures()) {
      const bool recomputed_group = figure.group == FigureGroup::timing     ? timing_ok
                                    : figure.group == FigureGroup::achieved ? achieved_ok
                                    : figure.group == FigureGroup::profile  ? profile_ok
                                    : figure.group == FigureGroup::energy   ? energy_ok
                                    : figure.group == FigureGroup::claimed  ? false
                                                                            : model_ok;
      if (recomputed_group && !figure.view()) compare(figure, recomputed);
    }
    for (Finding& finding : check_claimed_figures(row_, report_.ceiling, where_)) {
      out_.findings.push_back(std::move(finding));
    }
  }

 private:
  void add(FindingKind kind, std::string message) {
    out_.findings.push_back({kind, where_, std::move(message)});
  }

  bool close(double a, double b) const { return agree(a, b, tolerance_); }

  // A figure absent on both sides is not counted; one that a report of
  // before its key lacks (optional_on_read) is not missing, except a profile
  // figure: every report with a profile has its keys.
  void compare(const Figure& figure, const ResultRow& recomputed) {
    const FigureValue reported = figure_value(figure, row_);
    const FigureValue again = figure_value(figure, recomputed);
    const bool reported_absent = std::holds_alternative<std::monostate>(reported);
    if (reported_absent && std::holds_alternative<std::monostate>(again)) return;
    if (reported_absent && figure.optional_on_read && figure.group != FigureGroup::profile) return;
    ++out_.figures_checked;
    const double* a = std::get_if<double>(&reported);
    const double* b = std::get_if<double>(&again);
    if (a != nullptr && b != nullptr ? close(*a, *b) : reported == again) return;
    add(FindingKind::mismatch, fmt::format("{}: report {}, recomputed {}", figure.json,
                                           text_of(reported), text_of(again)));
  }

  // A sub-sampled check is stated in audit's output, and must name rows the
  // problem has: query rows, and key rows exactly when the row is backward.
  void check_sample() {
    if (!row_.correctness || !row_.correctness->sample) return;
    const CheckSample& sample = *row_.correctness->sample;
    const AttentionProblem& p = row_.problem;
    const bool backward = row_.direction == Direction::backward;
    add(FindingKind::note,
        fmt::format(
            "correctness sub-sampled: {} of {} query rows a head{}, drawn with seed {:#018x} "
            "(sampled_rows, roofline/model/check_sample.hpp)",
            sample.query_rows, p.seq_len,
            backward ? fmt::format(", {} of {} key rows a K/V head", sample.key_rows, p.keys())
                     : std::string(),
            sample.seed));
    const bool keys_ok =
        backward ? sample.key_rows >= 1 && sample.key_rows <= p.keys() : sample.key_rows == 0;
    if (sample.query_rows < 1 || sample.query_rows > p.seq_len || !keys_ok) {
      add(FindingKind::mismatch,
          fmt::format("correctness.sample: {} query rows and {} key rows a head, but a {} row of "
                      "this problem has {} query rows and {} key rows to sample",
                      sample.query_rows, sample.key_rows, to_string(row_.direction), p.seq_len,
                      backward ? p.keys() : 0));
    }
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
  // with another catalog. A kernel the catalog does not know (a peer, a
  // plugin) is recomputed from what its row records.
  void check_catalog() {
    const KernelDescription* current = find_kernel(row_.kernel);
    if (current == nullptr) return;
    const KernelDescription* kernel = catalog_revision(row_.kernel, row_.kernel_revision);
    if (kernel == nullptr) {
      std::vector<int> listed;
      for (const KernelDescription* earlier : current->earlier_revisions) {
        listed.push_back(earlier->revision);
      }
      listed.push_back(current->revision);
      add(FindingKind::mismatch,
          fmt::format("kernel_revision: report {}, the catalog's {} lists revision {}",
                      *row_.kernel_revision, current->name, fmt::join(listed, ", ")));
      return;
    }
    const std::int64_t head_dim = row_.problem.head_dim;
    if (head_dim < 1 || head_dim > max_dimension) return;
    const KernelRecord catalog = kernel_record(*kernel, row_.problem);
    if (row_.direction != catalog.direction) {
      add(FindingKind::mismatch,
          fmt::format("direction: report {}, the catalog's {} is {}", to_string(row_.direction),
                      kernel->name, to_string(catalog.direction)));
    }
    // The tile of the row's device where the report names its compute
    // capability; otherwise (a model report) any the catalog gives at d.
    const auto cc = device_compute_capability();
    std::vector<TileShape> tiles =
        cc ? std::vector<TileShape>{kernel->tile_for(static_cast<int>(head_dim), *cc)}
           : tiles_on_any_arch(*kernel, static_cast<int>(head_dim));
    if (kernel->problem_tile != nullptr) {
      for (TileShape& tile : tiles) {
        if (tile.tiled()) tile = kernel->problem_tile(row_.problem, tile, device_sm_count());
      }
    }
    if (kernel->supports_head_dim(static_cast<int>(head_dim)) &&
        std::find(tiles.begin(), tiles.end(), row_.tile) == tiles.end()) {
      std::vector<std::string> names;
      for (TileShape tile : tiles) names.push_back(fmt::format("{}x{}", tile.br, tile.bc));
      add(FindingKind::mismatch,
          fmt::format("tile: report {}x{}, the catalog's {} uses {} at d={}", row_.tile.br,
                      row_.tile.bc, kernel->name, fmt::join(names, " or "), head_dim));
    }
    if (row_.compute_unit != catalog.compute_unit) {
      add(FindingKind::mismatch,
          fmt::format("compute_unit: report {}, the catalog's {} runs {} on {}",
                      to_string(row_.compute_unit), kernel->name, to_string(row_.problem.dtype),
                      to_string(catalog.compute_unit)));
    }
    if (row_.model && row_.model->traffic.model != catalog.traffic) {
      add(FindingKind::mismatch,
          fmt::format("traffic.model: report {}, the catalog's {} is modelled as {}",
                      to_string(row_.model->traffic.model), kernel->name,
                      to_string(catalog.traffic)));
    }
    check_kv_splits(*kernel);
  }

  // A split-KV row's splits are the plan for its GPU's SMs and config (the
  // device's in a sweep, the L2 model's inputs otherwise), as the launcher
  // makes it.
  void check_kv_splits(const KernelDescription& kernel) {
    if (!row_.model || row_.model->traffic.model != TrafficModelKind::split_kv) return;
    if (!row_.tile.tiled()) return;
    std::optional<int> sm_count;
    std::optional<ComputeCapability> cc;
    if (const DeviceRecord* device = row_device()) {
      sm_count = device->sm_count;
      cc = parse_compute_capability(device->cc);
    }
    if (const auto& inputs = row_.model->l2_inputs; inputs && (!sm_count || !cc)) {
      if (!sm_count) sm_count = inputs->sm_count;
      if (!cc) cc = inputs->cc;
    }
    if (!sm_count || *sm_count < 1) return;
    const KernelConfig config = kernel.config_for(static_cast<int>(row_.problem.head_dim),
                                                  cc.value_or(kernel.min_compute_capability));
    const int planned =
        plan_kv_splits(row_.problem, row_.tile, *sm_count, config.page_table_entries).splits;
    if (row_.model->traffic.kv_splits != planned) {
      add(FindingKind::mismatch,
          fmt::format("traffic.kv_splits: report {}, the plan for {} SMs is {}",
                      row_.model->traffic.kv_splits, *sm_count, planned));
    }
  }

  const DeviceRecord* row_device() const {
    if (!row_.device) return nullptr;
    for (const DeviceRecord& device : report_.devices) {
      if (device.index == *row_.device) return &device;
    }
    return nullptr;
  }

  // The SMs of the row's device, or of the GPU its L2-aware figures used
  // (a model report). A model row the L2 simulation does not cover (skipped,
  // or too many CTAs) records none: the rows of a model report share one GPU,
  // so another row's L2 inputs name its SMs. 0 where no row records them.
  int device_sm_count() const {
    if (const DeviceRecord* device = row_device()) return device->sm_count;
    if (row_.model && row_.model->l2_inputs) return row_.model->l2_inputs->sm_count;
    for (const ResultRow& other : report_.results) {
      if (!other.device && other.model && other.model->l2_inputs) {
        return other.model->l2_inputs->sm_count;
      }
    }
    return 0;
  }

  std::optional<ComputeCapability> device_compute_capability() const {
    const DeviceRecord* device = row_device();
    if (device == nullptr) return std::nullopt;
    return parse_compute_capability(device->cc);
  }

  // model_figures with the row's own record and convention. False when the
  // row has no model figures or they cannot be recomputed.
  bool recompute_model(ResultRow& recomputed) {
    if (!row_.model) return false;
    if (const auto why = why_not_recomputable(row_)) {
      add(FindingKind::unverifiable, *why);
      return false;
    }
    KernelRecord record = kernel_record(row_);
    if (record.traffic == TrafficModelKind::plugin) count_own_bytes_again(record);
    try {
      recomputed.model = model_figures(record, row_.problem, report_.ceiling,
                                       row_.model->flops.convention, row_.model->l2_inputs);
    } catch (const std::exception& error) {
      add(FindingKind::unverifiable,
          fmt::format("traffic: cannot recompute with model '{}': {}",
                      to_string(row_.model->traffic.model), error.what()));
      return false;
    }
    if (!recomputed.model->roofline && row_.status == RowStatus::ok) {
      add(FindingKind::mismatch,
          fmt::format("status: ok, but the ceiling {} has no {} peak (the model skips such rows)",
                      report_.ceiling.gpu, to_string(row_.compute_unit)));
    }
    check_breakdown(recomputed.model->traffic);
    check_l2_inputs();
    return true;
  }

  // A `plugin` row's bytes from the plugin that provenance names for its
  // kernel, where audit was given that file (same SHA-256); otherwise they
  // stay as recorded and the tally says so.
  void count_own_bytes_again(KernelRecord& record) {
    const PluginKernelRecord* plugin = plugin_of(report_, row_.kernel);
    if (plugin == nullptr) {
      add(FindingKind::mismatch,
          fmt::format("traffic.model: plugin, but provenance.plugins names no plugin that "
                      "brought {}",
                      row_.kernel));
      return;
    }
    const auto source = std::find_if(plugins_.begin(), plugins_.end(), [&](const auto& s) {
      return s.kernel == row_.kernel && s.sha256 == plugin->sha256 && s.count != nullptr;
    });
    if (source == plugins_.end()) {
      ++tally_.as_recorded[row_.kernel];
      return;
    }
    ++tally_.counted_again[row_.kernel];
    const ByteCount count = checked_byte_count(*source->count, row_.kernel, row_.problem);
    if (const std::string* why = std::get_if<std::string>(&count)) {
      ++out_.figures_checked;
      add(FindingKind::mismatch, fmt::format("traffic.bytes: report {}, recomputed none: {}",
                                             number(*record.own_bytes), *why));
      return;
    }
    record.own_bytes = std::get<double>(count);  // traffic.bytes is compared with it
  }

  // The L2-aware model's GPU figures are the row's device's, where the
  // report records one.
  void check_l2_inputs() {
    const auto& inputs = row_.model->l2_inputs;
    if (!inputs || !row_.device) return;
    for (const DeviceRecord& device : report_.devices) {
      if (device.index != *row_.device) continue;
      ++out_.figures_checked;
      if (inputs->l2_bytes != device.l2_bytes || inputs->sm_count != device.sm_count ||
          to_string(inputs->cc) != device.cc) {
        add(FindingKind::mismatch,
            fmt::format("traffic.l2_model: L2 {} B, {} SMs, cc {}; device {} has {} B, {} SMs, "
                        "cc {}",
                        number(inputs->l2_bytes), inputs->sm_count, to_string(inputs->cc),
                        device.index, number(device.l2_bytes), device.sm_count, device.cc));
      }
    }
  }

  void check_breakdown(const TrafficEstimate& traffic) {
    std::map<std::string, double> reported;
    for (const TensorBytes& entry : row_.model->traffic.breakdown) {
      reported[entry.tensor] += entry.bytes;
    }
    for (const TensorBytes& entry : traffic.breakdown) {
      const auto it = reported.find(entry.tensor);
      const std::string field = fmt::format("traffic.breakdown.{}", entry.tensor);
      ++out_.figures_checked;
      if (it == reported.end()) {
        add(FindingKind::mismatch,
            fmt::format("{}: absent from the report, recomputed {}", field, number(entry.bytes)));
        continue;
      }
      if (!close(it->second, entry.bytes)) {
        add(FindingKind::mismatch, fmt::format("{}: report {}, recomputed {}", field,
                                               number(it->second), number(entry.bytes)));
      }
      reported.erase(it);
    }
    for (const auto& [tensor, bytes] : reported) {
      add(FindingKind::mismatch,
          fmt::format("traffic.breakdown.{}: report {}, but the {} model has no such tensor",
                      tensor, number(bytes), to_string(row_.model->traffic.model)));
    }
  }

  // The summary from the raw samples. False when there are none.
  bool recompute_timing(ResultRow& recomputed) {
    if (!row_.timing) {
      if (row_.achieved) {
        add(FindingKind::mismatch, "achieved: present, but there is no timing to derive it from");
      }
      return false;
    }
    if (row_.timing->samples_ms.empty()) {
      add(FindingKind::unverifiable,
          "timing: no raw samples; the median and the other summary figures cannot be "
          "recomputed");
      return false;  // achieved is still checked against the reported median
    }
    recomputed.timing->summary = summarize(row_.timing->samples_ms);
    return true;
  }

  // achieved_figures over the (recomputed) median. False when there is
  // nothing to compare.
  bool recompute_achieved(ResultRow& recomputed) {
    if (!row_.timing) return false;
    const Achieved achieved =
        achieved_figures(*recomputed.model, recomputed.timing->summary.median, report_.ceiling);
    if (!row_.achieved) {
      if (row_.status == RowStatus::ok && achieved.TFLOPs > 0) {
        add(FindingKind::mismatch,
            fmt::format("achieved: absent, recomputed TFLOPs {}", number(achieved.TFLOPs)));
      }
      return false;
    }
    recomputed.achieved = achieved;
    return true;
  }

  // profile_figures over the row's counters with the recomputed model and
  // achieved figures. False without collected counters.
  bool recompute_profile(ResultRow& recomputed) {
    if (!row_.profile || !row_.profile->collected()) return false;
    if (const auto why = recorded_launch_mismatch(*row_.profile)) {
      add(FindingKind::mismatch, *why);
    }
    try {
      recomputed.profile->derived =
          profile_figures(recomputed, report_.ceiling, device_compute_capability());
    } catch (const std::exception& error) {
      add(FindingKind::mismatch, fmt::format("profile: cannot recompute: {}", error.what()));
      return false;
    }
    return true;
  }

  // energy_figures over the row's counter readings and the recomputed
  // model's FLOPs. False without collected readings; readings that give no
  // figures are a mismatch.
  bool recompute_energy(ResultRow& recomputed) {
    if (!row_.energy || !row_.energy->collected()) return false;
    OrReason<EnergyDerived> again = energy_figures(*row_.energy, recomputed.model->flops.counted());
    if (const auto* why = std::get_if<std::string>(&again)) {
      add(FindingKind::mismatch, fmt::format("energy: figures reported, but {}", *why));
      return false;
    }
    recomputed.energy->derived = std::get<EnergyDerived>(std::move(again));
    return true;
  }

  const Report& report_;
  const ResultRow& row_;
  std::string where_;
  const AuditTolerance& tolerance_;
  std::span<const PluginByteSource> plugins_;
  OwnCountTally& tally_;
  AuditResult& out_;
};

}  // namespace

bool agree(double a, double b, const AuditTolerance& tolerance) {
  if (!std::isfinite(a) || !std::isfinite(b)) return a == b;
  return std::fabs(a - b) <=
         tolerance.absolute + tolerance.relative * std::max(std::fabs(a), std::fabs(b));
}

void check_auditable_flag(const Provenance& p, const std::vector<std::string>& failures,
                          AuditResult& out) {
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

std::size_t AuditResult::failing() const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.fails(); }));
}

AuditResult audit_report(const Report& report, const AuditTolerance& tolerance,
                         std::span<const PluginByteSource> plugins) {
  AuditResult result;
  result.rows = report.results.size();
  check_auditable_flag(report.provenance, auditability_failures(report), result);
  if (report.results.empty()) {
    result.findings.push_back({FindingKind::note, "report", "no result rows"});
  }
  OwnCountTally tally;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    RowAudit(report, i, tolerance, plugins, tally, result).run();
  }
  add_own_count_notes(report, tally, result);
  add_interval_notes(report, result);
  add_timing_notes(report, result);
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
  out += fmt::format("{}: {}: {} {}, {} figures recomputed{}{}\n", file,
                     result.consistent() ? "consistent" : "INCONSISTENT", result.rows,
                     result.rows_are, result.figures_checked, tally.empty() ? "" : "; ", tally);
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
