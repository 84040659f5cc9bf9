#pragma once

// `compare BASE NEW`: the same configurations in two reports, side by side,
// with a verdict that knows how noisy each measurement was. Pure: the
// command reads the files and prints what render_comparison returns.

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/evidence/sample_separation.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report.hpp"

namespace cfr::evidence {

// Two judges decide a timed row (docs/evidence-tools.md, "Verdict"): the
// medians (is new/base beyond 1 +- threshold?) and the raw samples (are the
// [min, q3] intervals apart and does Mann-Whitney reject "no shift"?). SAME,
// FASTER and SLOWER when they agree; AMBIGUOUS when they do not. FAILED when
// the base row ran and the new one did not; NOT_COMPARED when either side
// has no time (model rows, skipped).
enum class Verdict { same, faster, slower, ambiguous, failed, not_compared };

// "SAME", "FASTER", "SLOWER", "AMBIGUOUS", "FAILED", "N/A"
std::string_view to_string(Verdict verdict);

// What a timed row's verdict rests on: both judges, or the medians alone
// when a side has no raw samples (a historical row).
enum class Basis { none, samples, medians };
std::string_view to_string(Basis basis);  // "-", "samples", "medians"

// What makes two rows the same configuration: a row's identity, and the
// device model it ran on.
struct RowKey : RowIdentity {
  std::string device_model;  // empty when devices are not part of the match

  friend auto operator<=>(const RowKey&, const RowKey&) = default;
};

// "fa1_wmma forward fp16 B=1 H=8 N=1024 d=64 causal on NVIDIA H200"
std::string describe(const RowKey& key);

// The name of the device a row ran on, looked up by index in devices[]. A row
// with no device (a model projection, a historical row) is keyed by the name
// of the GPU its ceiling describes.
std::string device_model(const Report& report, const ResultRow& row);

// Every device model of a report's rows, sorted, without repeats.
std::vector<std::string> device_models(const Report& report);

struct CompareOptions {
  std::optional<double> threshold;  // relative; empty: the noisier row's relative stdev
  // The Mann-Whitney p-value below which the samples establish a change.
  double significance = 0.05;
  bool allow_unauditable = false;
  bool allow_cross_device = false;
  // Base kernel name -> new kernel name, to set a renamed kernel against its
  // predecessor (a historical "cuflash-attn-v0.4.0" against "fa1_scalar").
  std::vector<std::pair<std::string, std::string>> kernel_aliases;
  // --by shape: every base row against every new row of its shape, whatever
  // the two kernels (torch's SDPA backends against ours: one table of ours
  // over theirs). Off: rows pair by kernel name (after kernel_aliases).
  bool by_shape = false;
  // --by fastest (with by_shape): each shape's new rows against the base row
  // of that shape with the smallest median only (the fastest peer backend);
  // the shape's other base rows are counted in Comparison::slower_base_rows.
  bool fastest_base = false;
  // Figures shown base -> new beside each matched row's verdict (--figures).
  std::vector<const Figure*> figures;
};

struct FigureChange {
  const Figure* figure = nullptr;
  FigureValue base;
  FigureValue next;
};

struct RowComparison {
  RowKey key;  // its kernel is the new row's
  // The base row's kernel where it is another (--match-kernel, --by shape).
  std::string base_kernel;
  std::optional<double> base_ms;  // medians
  std::optional<double> new_ms;
  double ratio = 0;      // new / base; above 1 is slower
  double threshold = 0;  // the relative change this row had to exceed
  Basis basis = Basis::none;
  std::optional<SampleSeparation> samples;  // when both sides have raw samples
  Verdict verdict = Verdict::not_compared;
  std::string note;                   // why it was not compared, or what failed
  std::vector<FigureChange> figures;  // CompareOptions::figures, in order
};

// The geometric mean of new/base median ratios over the rows timed on both
// sides, whatever their verdicts: one number for "how did the whole set
// move". Empty ratio when no row is timed on both sides.
struct GeometricMean {
  std::optional<double> ratio;
  std::size_t rows = 0;
};

struct Comparison {
  std::vector<std::string> labels;  // printed loudly above the table
  std::vector<RowComparison> rows;
  std::vector<RowKey> only_in_base;
  std::vector<RowKey> only_in_new;
  // --by fastest: base rows left out because another base row of their shape
  // was faster.
  std::size_t slower_base_rows = 0;

  std::size_t count(Verdict verdict) const;
  // What --fail-on-regression gates on: a SLOWER or FAILED row. AMBIGUOUS is
  // not a regression (--fail-on-ambiguous gates on it).
  bool regressed() const;
};

GeometricMean geometric_mean(const std::vector<Comparison>& comparisons);

// The mean of one (new kernel, base kernel) pairing's rows.
struct PairingMean {
  std::string kernel;       // the new rows'
  std::string base_kernel;  // the base rows' (the same name where they pair by name)
  GeometricMean mean;
};

// One mean per pairing, in kernel order, when a comparison sets kernels
// against others (--by shape, --match-kernel); empty otherwise. A mean over
// every pairing at once would mix torch's math backend with its flash one.
std::vector<PairingMean> geometric_means_by_pairing(const Comparison& comparison);

// The most row pairs one comparison forms (--by shape multiplies kernels).
inline constexpr std::size_t max_compared_pairs = 100000;

// Throws std::invalid_argument for a baseline that is not auditable, or reports
// of different device models, unless the options allow it (an allowed
// comparison carries a label saying so), and for --by shape pairs beyond
// max_compared_pairs.
Comparison compare_reports(const Report& base, const Report& next, const CompareOptions& options);

std::string render_comparison(const Comparison& comparison, std::string_view base_name,
                              std::string_view new_name);
// One line: "3 SAME, 1 FASTER, ..." over several comparisons.
std::string render_verdict_counts(const std::vector<Comparison>& comparisons);
// One line: "geomean new/base 0.9949 over 8 rows" (or "no row timed on both sides").
std::string render_geometric_mean(const GeometricMean& mean);

nlohmann::json to_json(const GeometricMean& mean);  // {"ratio": x or null, "rows": n}

nlohmann::json to_json(const Comparison& comparison);

}  // namespace cfr::evidence
