#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr::evidence {

namespace {

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// A row's time: its median, when it ran.
std::optional<double> median_ms(const ResultRow& row) {
  static const Figure& median = figure("measured/median_ms");
  const auto ms = figure_number(median, row);
  if (row.status != RowStatus::ok || !ms || *ms <= 0) return std::nullopt;
  return ms;
}

// The spread of the raw samples; a row without samples (historical) claims
// no noise.
double relative_stdev(const ResultRow& row) {
  if (!row.timing) return 0;
  return summarize(row.timing->samples_ms).relative_stdev();
}

std::span<const double> raw_samples(const ResultRow& row) {
  if (!row.timing) return {};
  return row.timing->samples_ms;
}

std::string why_not_compared(const ResultRow& base, const ResultRow& next) {
  for (const auto& [side, row] : {std::pair{"base", &base}, std::pair{"new", &next}}) {
    if (row->status != RowStatus::ok) {
      return fmt::format("{} {}: {}", side, to_string(row->status), row->reason);
    }
    if (!median_ms(*row)) return fmt::format("{} has no measured time", side);
  }
  return "";
}

std::string percent_change(double ratio) {
  return fmt::format("{:+.1f}%", (ratio - 1) * 100);
}

// Why the two judges disagree, in one clause.
std::string ambiguity_note(const RowComparison& r, bool beyond, double significance) {
  const SampleSeparation& s = *r.samples;
  if (beyond) {
    if (s.gap == IntervalGap::overlap) {
      return fmt::format(
          "median {} beyond the {:.1f}% threshold, but the [min, q3] intervals overlap: base "
          "[{:.4g}, {:.4g}], new [{:.4g}, {:.4g}] ms",
          percent_change(r.ratio), r.threshold * 100, s.base.low, s.base.high, s.next.low,
          s.next.high);
    }
    return fmt::format(
        "median {} beyond the {:.1f}% threshold and the intervals are apart, but Mann-Whitney "
        "p = {:.2g} is not below {:.2g} ({} vs {} samples)",
        percent_change(r.ratio), r.threshold * 100, s.test.p_value, significance, s.base_count,
        s.new_count);
  }
  return fmt::format(
      "the samples are apart (intervals apart, Mann-Whitney p = {:.2g}), but the median moved "
      "{}, within the {:.1f}% threshold",
      s.test.p_value, percent_change(r.ratio), r.threshold * 100);
}

// The rule of docs/evidence-tools.md ("Verdict"). The interval gap fixes the
// direction: new [min, q3] above base's puts the new median above base's, so
// an established change and a median change beyond the threshold never
// point opposite ways.
void judge(RowComparison& r, double significance) {
  const bool slower = r.ratio > 1 + r.threshold;
  const bool faster = r.ratio < 1 - r.threshold;
  const bool beyond = slower || faster;
  if (!r.samples) {
    r.verdict = slower ? Verdict::slower : faster ? Verdict::faster : Verdict::same;
    return;
  }
  const bool established = r.samples->established(significance);
  if (beyond && established) {
    r.verdict = slower ? Verdict::slower : Verdict::faster;
  } else if (!beyond && !established) {
    r.verdict = Verdict::same;
  } else {
    r.verdict = Verdict::ambiguous;
    r.note = ambiguity_note(r, beyond, significance);
  }
}

RowComparison compare_rows(const RowKey& key, const ResultRow& base, const ResultRow& next,
                           const CompareOptions& options) {
  RowComparison out;
  out.key = key;
  out.base_ms = median_ms(base);
  out.new_ms = median_ms(next);
  for (const Figure* f : options.figures) {
    out.figures.push_back({f, figure_value(*f, base), figure_value(*f, next)});
  }
  if (!out.base_ms || !out.new_ms) {
    const bool lost = out.base_ms && next.status == RowStatus::failed;
    out.verdict = lost ? Verdict::failed : Verdict::not_compared;
    out.note = why_not_compared(base, next);
    return out;
  }
  out.ratio = *out.new_ms / *out.base_ms;
  out.threshold = options.threshold.value_or(std::max(relative_stdev(base), relative_stdev(next)));
  const std::span<const double> base_samples = raw_samples(base);
  const std::span<const double> new_samples = raw_samples(next);
  if (!base_samples.empty() && !new_samples.empty()) {
    out.basis = Basis::samples;
    out.samples = separate_samples(base_samples, new_samples);
  } else {
    out.basis = Basis::medians;
    out.note = fmt::format("medians only: {} no raw samples",
                           base_samples.empty() && new_samples.empty() ? "neither side has"
                           : base_samples.empty()                      ? "base has"
                                                                       : "new has");
  }
  judge(out, options.significance);
  return out;
}

// The source and the first reason, cut short: a label is one line.
std::string provenance_text(const Report& report) {
  const Provenance& p = report.provenance;
  std::string reason = p.reasons.empty() ? "" : p.reasons.front();
  constexpr std::size_t longest = 100;
  if (reason.size() > longest) {
    std::size_t cut = longest;
    while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    reason = reason.substr(0, cut) + "...";
  }
  return fmt::format("source {}{}", to_string(p.source), reason.empty() ? "" : "; " + reason);
}

void check_refusals(const Report& base, const Report& next, const CompareOptions& options,
                    bool cross_device, Comparison& out) {
  if (!base.provenance.auditable) {
    if (!options.allow_unauditable) {
      throw std::invalid_argument(fmt::format(
          "the baseline is not auditable ({}); pass --allow-unauditable to compare anyway",
          provenance_text(base)));
    }
    out.labels.push_back(fmt::format(
        "BASELINE NOT AUDITABLE ({}): its times are not evidence; compared only because of "
        "--allow-unauditable",
        provenance_text(base)));
  }
  if (!next.provenance.auditable) {
    out.labels.push_back(fmt::format("NEW REPORT NOT AUDITABLE ({}): its times are not evidence",
                                     provenance_text(next)));
  }
  if (cross_device) {
    const std::string base_models = join(device_models(base), ", ");
    const std::string new_models = join(device_models(next), ", ");
    if (!options.allow_cross_device) {
      throw std::invalid_argument(
          fmt::format("the reports come from different device models (base: {}; new: {}); pass "
                      "--allow-cross-device to compare anyway",
                      base_models, new_models));
    }
    out.labels.push_back(fmt::format(
        "CROSS-DEVICE (base: {}; new: {}): ratios mix hardware and code; compared only because "
        "of --allow-cross-device",
        base_models, new_models));
  }
}

RowKey key_of(const Report& report, const ResultRow& row, bool with_device) {
  return {row, with_device ? device_model(report, row) : std::string()};
}

// The key without its kernel: what --by shape pairs on, and what rows are
// grouped by before their kernels are matched.
RowKey shape_key(const Report& report, const ResultRow& row, bool with_device) {
  RowKey shape = key_of(report, row, with_device);
  shape.kernel.clear();
  return shape;
}

// "    TFLOPS 27.42 -> 29.10; % roof 10.6 -> 11.3": the --figures of one row.
std::string render_figure_changes(const std::vector<FigureChange>& changes) {
  std::string out;
  for (const FigureChange& c : changes) {
    out += fmt::format("{}{} {} -> {}", out.empty() ? "    " : "; ", c.figure->label,
                       format_figure(*c.figure, c.base), format_figure(*c.figure, c.next));
  }
  return out.empty() ? out : out + "\n";
}

// {"base_interval_ms": [min, q3], "new_interval_ms": [...], "intervals_apart",
// "p_value", "base_count", "new_count"}
nlohmann::json samples_json(const SampleSeparation& s) {
  return {{"base_interval_ms", {s.base.low, s.base.high}},
          {"new_interval_ms", {s.next.low, s.next.high}},
          {"intervals_apart", s.gap != IntervalGap::overlap},
          {"p_value", s.test.p_value},
          {"base_count", s.base_count},
          {"new_count", s.new_count}};
}

nlohmann::json value_json(const FigureValue& value) {
  if (const double* x = std::get_if<double>(&value)) return *x;
  if (const std::string* word = std::get_if<std::string>(&value)) return *word;
  return nullptr;
}

// The new report's name for a base kernel: its --match-kernel target, or itself.
std::string aliased(const std::string& base_kernel, const CompareOptions& options) {
  for (const auto& [from, to] : options.kernel_aliases) {
    if (base_kernel == from) return to;
  }
  return base_kernel;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::same: return "SAME";
    case Verdict::faster: return "FASTER";
    case Verdict::slower: return "SLOWER";
    case Verdict::ambiguous: return "AMBIGUOUS";
    case Verdict::failed: return "FAILED";
    case Verdict::not_compared: return "N/A";
  }
  return "?";
}

std::string_view to_string(Basis basis) {
  switch (basis) {
    case Basis::none: return "-";
    case Basis::samples: return "samples";
    case Basis::medians: return "medians";
  }
  return "?";
}

std::string describe(const RowKey& key) {
  return row_label(key) + (key.device_model.empty() ? "" : " on " + key.device_model);
}

std::string device_model(const Report& report, const ResultRow& row) {
  if (row.device) {
    const DeviceRecord* device = device_of(report, row);
    return device ? device->name : fmt::format("device {} (unrecorded)", *row.device);
  }
  return report.ceiling.gpu_name.empty() ? report.ceiling.gpu : report.ceiling.gpu_name;
}

std::vector<std::string> device_models(const Report& report) {
  std::set<std::string> models;
  for (const ResultRow& row : report.results) models.insert(device_model(report, row));
  return {models.begin(), models.end()};
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(),
                    [verdict](const RowComparison& r) { return r.verdict == verdict; }));
}

bool Comparison::regressed() const {
  return count(Verdict::slower) > 0 || count(Verdict::failed) > 0;
}

namespace {

// Adds a timed row's log ratio to a running mean; rows without a time on both
// sides have no ratio.
void add_ratio(const RowComparison& r, double& log_sum, GeometricMean& mean) {
  if (!r.base_ms || !r.new_ms) return;
  log_sum += std::log(r.ratio);
  ++mean.rows;
}

void finish_mean(double log_sum, GeometricMean& mean) {
  if (mean.rows > 0) mean.ratio = std::exp(log_sum / static_cast<double>(mean.rows));
}

}  // namespace

GeometricMean geometric_mean(const std::vector<Comparison>& comparisons) {
  GeometricMean out;
  double log_sum = 0;
  for (const Comparison& c : comparisons) {
    for (const RowComparison& r : c.rows) add_ratio(r, log_sum, out);
  }
  finish_mean(log_sum, out);
  return out;
}

std::vector<PairingMean> geometric_means_by_pairing(const Comparison& comparison) {
  const bool across_kernels =
      std::any_of(comparison.rows.begin(), comparison.rows.end(),
                  [](const RowComparison& r) { return !r.base_kernel.empty(); });
  if (!across_kernels) return {};
  std::map<std::pair<std::string, std::string>, std::pair<double, GeometricMean>> means;
  for (const RowComparison& r : comparison.rows) {
    auto& [log_sum, mean] =
        means[{r.key.kernel, r.base_kernel.empty() ? r.key.kernel : r.base_kernel}];
    add_ratio(r, log_sum, mean);
  }
  std::vector<PairingMean> out;
  for (auto& [kernels, sum_and_mean] : means) {
    auto& [log_sum, mean] = sum_and_mean;
    finish_mean(log_sum, mean);
    out.push_back({kernels.first, kernels.second, mean});
  }
  return out;
}

namespace {

// --by shape sets each base row against every new kernel of its shape, so two
// reports of many kernels at one shape multiply: 3000 x 3000 rows took 24 GB.
// Counted before any pair is formed.
void refuse_too_many_pairs(
    const Report& base,
    const std::map<RowKey, std::map<std::string, std::vector<std::size_t>>>& new_rows,
    bool with_device) {
  std::size_t pairs = 0;
  for (const ResultRow& row : base.results) {
    if (const auto found = new_rows.find(shape_key(base, row, with_device));
        found != new_rows.end()) {
      pairs += found->second.size();
    }
  }
  if (pairs > max_compared_pairs) {
    throw std::invalid_argument(fmt::format(
        "--by shape would set {} row pairs side by side, more than the {} one comparison takes "
        "(fewer kernels per shape, or pair two kernels with --match-kernel)",
        pairs, max_compared_pairs));
  }
}

// --by fastest: the index of each shape's fastest timed base row.
std::map<RowKey, std::size_t> fastest_base_rows(const Report& base, bool with_device) {
  std::map<RowKey, std::size_t> fastest;
  for (std::size_t i = 0; i < base.results.size(); ++i) {
    const auto ms = median_ms(base.results[i]);
    if (!ms) continue;
    const RowKey shape = shape_key(base, base.results[i], with_device);
    const auto [at, inserted] = fastest.emplace(shape, i);
    if (!inserted && *ms < *median_ms(base.results[at->second])) at->second = i;
  }
  return fastest;
}

}  // namespace

Comparison compare_reports(const Report& base, const Report& next, const CompareOptions& options) {
  const bool cross_device = device_models(base) != device_models(next);
  Comparison out;
  check_refusals(base, next, options, cross_device, out);
  // Across devices the device is dropped from the key, or nothing would match.
  const bool with_device = !cross_device;

  // New rows by shape (the key without its kernel), then by kernel, in report order.
  std::map<RowKey, std::map<std::string, std::vector<std::size_t>>> new_rows;
  for (std::size_t i = 0; i < next.results.size(); ++i) {
    new_rows[shape_key(next, next.results[i], with_device)][next.results[i].kernel].push_back(i);
  }
  if (options.by_shape) refuse_too_many_pairs(base, new_rows, with_device);
  // Repeated keys (several devices of one model) pair up in report order: each
  // base kernel takes the next new row of a (shape, new kernel) it has not taken.
  std::map<std::tuple<RowKey, std::string, std::string>, std::size_t> taken;
  std::vector<bool> paired(next.results.size(), false);
  const std::map<RowKey, std::size_t> fastest =
      options.fastest_base ? fastest_base_rows(base, with_device) : std::map<RowKey, std::size_t>{};
  for (std::size_t b = 0; b < base.results.size(); ++b) {
    const ResultRow& base_row = base.results[b];
    RowKey shape = shape_key(base, base_row, with_device);
    // A shape none of whose base rows ran keeps them all (each says why).
    if (const auto best = fastest.find(shape); best != fastest.end() && best->second != b) {
      ++out.slower_base_rows;
      continue;
    }
    const std::string& base_kernel = base_row.kernel;
    const std::string wanted = options.by_shape ? "" : aliased(base_kernel, options);
    bool matched = false;
    if (const auto shape_rows = new_rows.find(shape); shape_rows != new_rows.end()) {
      for (const auto& [kernel, rows] : shape_rows->second) {
        if (!options.by_shape && kernel != wanted) continue;
        std::size_t& used = taken[{shape, kernel, base_kernel}];
        if (used == rows.size()) continue;
        const std::size_t index = rows[used++];
        paired[index] = true;
        matched = true;
        RowKey key = shape;
        key.kernel = kernel;
        RowComparison row = compare_rows(key, base_row, next.results[index], options);
        if (kernel != base_kernel) row.base_kernel = base_kernel;
        out.rows.push_back(std::move(row));
      }
    }
    if (!matched) {
      shape.kernel = base_kernel;
      out.only_in_base.push_back(std::move(shape));
    }
  }
  for (std::size_t i = 0; i < next.results.size(); ++i) {
    if (!paired[i]) out.only_in_new.push_back(key_of(next, next.results[i], with_device));
  }
  return out;
}

namespace {

// "yes"/"no": are the [min, q3] intervals apart; "-" when judged on medians.
std::string gap_text(const RowComparison& r) {
  if (!r.samples) return "-";
  return r.samples->gap == IntervalGap::overlap ? "no" : "yes";
}

// Below 1e-9 the digits say nothing more (and a p of thousands of samples
// underflows to 0); the JSON keeps the double.
std::string p_value_text(const RowComparison& r) {
  if (!r.samples) return "-";
  return r.samples->test.p_value < 1e-9 ? "<1e-9" : fmt::format("{:.2g}", r.samples->test.p_value);
}

// "fa2_mma" or, where the base row is another kernel's, "fa2_mma vs torch_sdpa_flash".
std::string kernel_label(const RowComparison& r) {
  return r.base_kernel.empty() ? r.key.kernel : r.key.kernel + " vs " + r.base_kernel;
}

// The served shapes' columns (K/V heads, keys, page), shown only where a
// row has a served shape, so a square comparison reads as before.
bool has_served_rows(const Comparison& c) {
  return std::any_of(c.rows.begin(), c.rows.end(),
                     [](const RowComparison& r) { return !r.key.problem.square(); });
}

std::string served_columns(const AttentionProblem& p) {
  return fmt::format(" {:>4} {:>7} {:>4}", p.key_heads(), p.keys(),
                     p.paged() ? std::to_string(p.page_size) : "-");
}

std::string render_row(const RowComparison& r, std::size_t kernel_width, bool served) {
  const bool timed = r.base_ms && r.new_ms;
  auto ms = [](const std::optional<double>& x) {
    return x ? fmt::format("{:.4f}", *x) : std::string("-");
  };
  const AttentionProblem& p = r.key.problem;
  std::string out = fmt::format(
      "{:<{}} {:<8} {:<5} {:>3} {:>4} {:>7}{} {:>4} {:<6} {:<24} {:>10} {:>10} {:>7} {:>9} {:>4} "
      "{:>8}  {}{}\n",
      kernel_label(r), kernel_width, to_string(r.key.direction), to_string(p.dtype), p.batch,
      p.heads, p.seq_len, served ? served_columns(p) : "", p.head_dim, p.causal ? "yes" : "no",
      r.key.device_model.empty() ? "(any)" : r.key.device_model, ms(r.base_ms), ms(r.new_ms),
      timed ? fmt::format("{:.3f}", r.ratio) : "-",
      timed ? fmt::format("{:.1f}%", r.threshold * 100) : "-", gap_text(r), p_value_text(r),
      to_string(r.verdict), r.note.empty() ? "" : " (" + r.note + ")");
  return out + render_figure_changes(r.figures);
}

}  // namespace

std::string render_comparison(const Comparison& c, std::string_view base_name,
                              std::string_view new_name) {
  std::string out = fmt::format("== {} -> {}\n", base_name, new_name);
  for (const std::string& label : c.labels) out += fmt::format("!! {}\n", label);
  std::size_t kernel_width = 22;
  for (const RowComparison& r : c.rows)
    kernel_width = std::max(kernel_width, kernel_label(r).size());
  const bool served = has_served_rows(c);
  out += fmt::format(
      "{:<{}} {:<8} {:<5} {:>3} {:>4} {:>7}{} {:>4} {:<6} {:<24} {:>10} {:>10} {:>7} {:>9} {:>4} "
      "{:>8}  {}\n",
      "kernel", kernel_width, "dir", "dtype", "B", "H", "N",
      served ? fmt::format(" {:>4} {:>7} {:>4}", "Hkv", "Nk", "page") : "", "d", "causal", "device",
      "base ms", "new ms", "ratio", "threshold", "gap", "p", "verdict");
  for (const RowComparison& r : c.rows) out += render_row(r, kernel_width, served);
  for (const RowKey& key : c.only_in_base) out += "only in base: " + describe(key) + "\n";
  for (const RowKey& key : c.only_in_new) out += "only in new: " + describe(key) + "\n";
  if (c.slower_base_rows > 0) {
    out += fmt::format("{} base row{} left out: another base row of the shape was faster\n",
                       c.slower_base_rows, c.slower_base_rows == 1 ? "" : "s");
  }
  out += render_verdict_counts({c}) + "\n";
  for (const PairingMean& pairing : geometric_means_by_pairing(c)) {
    out += fmt::format("{} over {}: {}\n", pairing.kernel, pairing.base_kernel,
                       render_geometric_mean(pairing.mean));
  }
  out += render_geometric_mean(geometric_mean({c})) + "\n";
  return out;
}

std::string render_verdict_counts(const std::vector<Comparison>& comparisons) {
  std::size_t counts[6] = {};
  std::size_t only_base = 0;
  std::size_t only_new = 0;
  for (const Comparison& c : comparisons) {
    for (const RowComparison& r : c.rows) ++counts[static_cast<int>(r.verdict)];
    only_base += c.only_in_base.size();
    only_new += c.only_in_new.size();
  }
  return fmt::format(
      "{} SAME, {} FASTER, {} SLOWER, {} AMBIGUOUS, {} FAILED, {} N/A; {} only in base, {} only "
      "in new",
      counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], only_base, only_new);
}

std::string render_geometric_mean(const GeometricMean& mean) {
  if (!mean.ratio) return "geomean new/base: no row timed on both sides";
  return fmt::format("geomean new/base {:.4f} over {} row{} timed on both sides", *mean.ratio,
                     mean.rows, mean.rows == 1 ? "" : "s");
}

nlohmann::json to_json(const GeometricMean& mean) {
  return {{"ratio", mean.ratio ? nlohmann::json(*mean.ratio) : nlohmann::json(nullptr)},
          {"rows", mean.rows}};
}

nlohmann::json to_json(const Comparison& c) {
  auto key_json = [](const RowKey& k) {
    nlohmann::json out = identity_json(k);
    out["device_model"] =
        k.device_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.device_model);
    return out;
  };
  auto optional = [](const std::optional<double>& x) {
    return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const RowComparison& r : c.rows) {
    nlohmann::json row = key_json(r.key);
    if (!r.base_kernel.empty()) row["base_kernel"] = r.base_kernel;
    const bool timed = r.base_ms && r.new_ms;
    row["base_ms"] = optional(r.base_ms);
    row["new_ms"] = optional(r.new_ms);
    row["ratio"] = timed ? nlohmann::json(r.ratio) : nlohmann::json(nullptr);
    row["threshold"] = timed ? nlohmann::json(r.threshold) : nlohmann::json(nullptr);
    row["basis"] =
        r.basis == Basis::none ? nlohmann::json(nullptr) : nlohmann::json(to_string(r.basis));
    row["samples"] = r.samples ? samples_json(*r.samples) : nlohmann::json(nullptr);
    row["verdict"] = to_string(r.verdict);
    row["note"] = r.note;
    if (!r.figures.empty()) {
      nlohmann::json figures = nlohmann::json::object();
      for (const FigureChange& f : r.figures) {
        figures[std::string(f.figure->tag)] = {{"base", value_json(f.base)},
                                               {"new", value_json(f.next)}};
      }
      row["figures"] = figures;
    }
    rows.push_back(row);
  }
  nlohmann::json only_base = nlohmann::json::array();
  for (const RowKey& key : c.only_in_base) only_base.push_back(key_json(key));
  nlohmann::json only_new = nlohmann::json::array();
  for (const RowKey& key : c.only_in_new) only_new.push_back(key_json(key));
  nlohmann::json pairing_means = nlohmann::json::array();
  for (const PairingMean& pairing : geometric_means_by_pairing(c)) {
    nlohmann::json entry = to_json(pairing.mean);
    entry["kernel"] = pairing.kernel;
    entry["base_kernel"] = pairing.base_kernel;
    pairing_means.push_back(std::move(entry));
  }
  nlohmann::json counts = nlohmann::json::object();
  for (Verdict v : {Verdict::same, Verdict::faster, Verdict::slower, Verdict::ambiguous,
                    Verdict::failed, Verdict::not_compared}) {
    counts[std::string(to_string(v))] = c.count(v);
  }
  return {{"labels", c.labels},
          {"rows", rows},
          {"only_in_base", only_base},
          {"only_in_new", only_new},
          {"slower_base_rows", c.slower_base_rows},
          {"counts", counts},
          {"geomean", to_json(geometric_mean({c}))},
          {"geomean_by_pairing", pairing_means},
          {"regression", c.regressed()}};
}

}  // namespace cfr::evidence
