// `cuflash-roofline compare BASE NEW`: matched rows of two reports with a
// noise-aware verdict, the CI regression gate (--fail-on-regression), and
// `compare --roofline REPORT…`: each report against its own roof.
//
// Paths: BASE NEW (two files or two folders, folders matched by file name),
// or BASE1 NEW1 BASE2 NEW2 … (pairs of files). Exit 0; 1 when
// --fail-on-regression and a row is SLOWER or FAILED or no row was compared,
// or --fail-on-ambiguous and a row is AMBIGUOUS; 2 for an unusable file or a
// refused comparison.
#include <algorithm>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "report_file.hpp"
#include "roofline/core/axis_values.hpp"
#include "roofline/core/gzip_text.hpp"
#include "roofline/evidence/compare.hpp"
#include "roofline/evidence/roof_fraction.hpp"
#include "roofline/report/auditability.hpp"
#include "roofline/report/figures.hpp"

namespace cfr::app {

namespace {

struct CompareOptions {
  std::vector<std::string> paths;
  double threshold = -1;  // negative: noise-aware
  double significance = 0.05;
  bool fail_on_regression = false;
  bool fail_on_ambiguous = false;
  bool allow_unauditable = false;
  bool allow_cross_device = false;
  std::vector<std::string> kernel_aliases;
  std::string by = "kernel";  // --by: how rows pair (kernel or shape)
  bool roofline = false;
  std::string figures;  // comma-separated tags, as typed
  std::string json_path;
};

// --figures as typed: "a,b" or "a, b" (blanks around a tag are not part of
// it); an empty item or a tag given twice is refused, as in every list option.
std::vector<const Figure*> chosen_figures(const std::string& typed) {
  std::vector<const Figure*> out;
  if (typed.empty()) return out;
  for (std::string_view tag : split_list(typed, "--figures")) {
    const Figure* figure = find_figure(tag);
    if (figure == nullptr) {
      std::string known;
      for (const Figure& f : row_figures())
        known += (known.empty() ? "" : ", ") + std::string(f.tag);
      throw std::runtime_error(
          fmt::format("--figures: unknown figure '{}' (known: {})", tag, known));
    }
    if (std::find(out.begin(), out.end(), figure) != out.end()) {
      throw std::runtime_error(fmt::format("--figures: '{}' appears twice", tag));
    }
    out.push_back(figure);
  }
  return out;
}

struct FilePairs {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> only_in_base;
  std::vector<std::string> only_in_new;
};

FilePairs pair_paths(const std::vector<std::string>& paths) {
  FilePairs out;
  if (paths.size() == 2 && (is_folder(paths[0]) || is_folder(paths[1]))) {
    for (const std::string& path : paths) {
      if (!is_folder(path)) {
        throw std::runtime_error(
            fmt::format("{}: not a folder (two folders, or files in BASE NEW pairs)", path));
      }
    }
    const std::vector<std::string> base = json_files_in(paths[0]);
    const std::vector<std::string> next = json_files_in(paths[1]);
    // X.json and X.json.gz are one report, compressed or not (a committed
    // baseline over 1 MB against a fresh sweep's file).
    const auto in = [&](const std::vector<std::string>& names, const std::string& name) {
      return std::find_if(names.begin(), names.end(), [&](const std::string& other) {
        return report_name_of(other) == report_name_of(name);
      });
    };
    for (const std::string& name : base) {
      if (const auto match = in(next, name); match != next.end()) {
        out.pairs.emplace_back(paths[0] + "/" + name, paths[1] + "/" + *match);
      } else {
        out.only_in_base.push_back(paths[0] + "/" + name);
      }
    }
    for (const std::string& name : next) {
      if (in(base, name) == base.end()) out.only_in_new.push_back(paths[1] + "/" + name);
    }
    if (out.pairs.empty()) {
      throw std::runtime_error(
          fmt::format("{} and {}: no report file name in common", paths[0], paths[1]));
    }
    return out;
  }
  if (paths.size() % 2 != 0) {
    throw std::runtime_error(fmt::format(
        "compare takes BASE NEW pairs; {} paths given (use --roofline for single reports)",
        paths.size()));
  }
  for (std::size_t i = 0; i < paths.size(); i += 2) out.pairs.emplace_back(paths[i], paths[i + 1]);
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_aliases(
    const std::vector<std::string>& aliases) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& alias : aliases) {
    const auto equals = alias.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == alias.size() ||
        alias.find('=', equals + 1) != std::string::npos) {
      throw std::runtime_error(
          fmt::format("--match-kernel {}: expected BASE_KERNEL=NEW_KERNEL", alias));
    }
    std::string base = alias.substr(0, equals);
    // One new name per base kernel: a second would be dropped without a word.
    for (const auto& [from, to] : out) {
      if (from == base) {
        throw std::runtime_error(
            fmt::format("--match-kernel {}: {} is already matched to {}", alias, base, to));
      }
    }
    out.emplace_back(std::move(base), alias.substr(equals + 1));
  }
  return out;
}

// `auditable: true` is what the gate trusts a baseline for; a flag that its
// own contents do not back (no samples, a dirty tree) is refused as an
// unauditable baseline would be.
void refuse_unbacked_baseline(const Report& base, const std::string& path,
                              const CompareOptions& options) {
  if (!base.provenance.auditable || options.allow_unauditable) return;
  const std::vector<std::string> failures = auditability_failures(base);
  if (failures.empty()) return;
  throw std::runtime_error(fmt::format(
      "{}: refused as a baseline: it claims auditable: true, but {} (`audit` lists every "
      "finding; --allow-unauditable compares anyway)",
      path, failures.front()));
}

std::string skipped_ceilings_note(const std::string& path) {
  return fmt::format("{}: a ceilings report, skipped (compare judges the rows of sweep reports)\n",
                     path);
}

// The report pairs to compare, read before anything is printed so that bad
// input fails alone. A pair of ceilings reports (the ceilings.json of two
// results folders) is skipped and listed; a ceilings report against a sweep
// report is refused.
std::vector<std::pair<Report, Report>> read_pairs(FilePairs& files, const CompareOptions& options,
                                                  std::vector<std::string>& skipped) {
  std::vector<std::pair<Report, Report>> reports;
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto& [base, next] : files.pairs) {
    auto base_document = read_report_or_ceilings(base);
    auto next_document = read_report_or_ceilings(next);
    const bool base_is_report = std::holds_alternative<Report>(base_document);
    if (base_is_report != std::holds_alternative<Report>(next_document)) {
      throw std::runtime_error(
          fmt::format("{} -> {}: one is a ceilings report, the other a sweep report", base, next));
    }
    if (!base_is_report) {
      skipped.push_back(base);
      continue;
    }
    reports.emplace_back(std::get<Report>(std::move(base_document)),
                         std::get<Report>(std::move(next_document)));
    refuse_unbacked_baseline(reports.back().first, base, options);
    kept.emplace_back(base, next);
  }
  files.pairs = std::move(kept);
  return reports;
}

int run_roofline_view(const CompareOptions& options) {
  std::vector<std::string> files;
  for (const std::string& path : options.paths) {
    if (!is_folder(path)) {
      files.push_back(path);
      continue;
    }
    for (const std::string& name : json_files_in(path)) files.push_back(path + "/" + name);
  }
  const OutputFiles outputs = evidence_outputs(files, {{"--json", options.json_path}});
  const EvidenceFiles read = read_evidence_files(files);
  const std::vector<Report>& reports = read.reports;
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  for (const std::string& path : read.ceilings_paths) screen << skipped_ceilings_note(path);
  nlohmann::json entries = nlohmann::json::array();
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto rows = evidence::roof_fractions(reports[i]);
    screen << evidence::render_roof_fractions(rows, reports[i], read.report_paths[i]);
    entries.push_back({{"file", read.report_paths[i]},
                       {"source", to_string(reports[i].provenance.source)},
                       {"auditable", reports[i].provenance.auditable},
                       {"ceiling", reports[i].ceiling.gpu},
                       {"ceiling_source", reports[i].ceiling.source},
                       {"rows", evidence::to_json(rows)}});
  }
  screen << std::flush;
  if (outputs.has("--json")) {
    const nlohmann::json document{{"schema", "cuflash-roofline/roof-fraction/v1"},
                                  {"reports", entries}};
    outputs.write({{"--json", json_text(document)}});
  }
  return exit_code::ok;
}

std::size_t compared_rows(const std::vector<evidence::Comparison>& comparisons) {
  std::size_t count = 0;
  for (const evidence::Comparison& comparison : comparisons) {
    count += comparison.rows.size() - comparison.count(evidence::Verdict::not_compared);
  }
  return count;
}

evidence::CompareOptions comparison_settings(const CompareOptions& options) {
  evidence::CompareOptions settings;
  if (options.threshold >= 0) settings.threshold = options.threshold;
  settings.significance = options.significance;
  settings.allow_unauditable = options.allow_unauditable;
  settings.allow_cross_device = options.allow_cross_device;
  settings.kernel_aliases = parse_aliases(options.kernel_aliases);
  settings.by_shape = options.by == "shape" || options.by == "fastest";
  settings.fastest_base = options.by == "fastest";
  // --by shape pairs every kernel of a shape already; a rename on top would mean nothing.
  if (settings.by_shape && !settings.kernel_aliases.empty()) {
    throw std::runtime_error(
        fmt::format("--match-kernel {}: not with --by {}, which pairs every kernel of a shape",
                    options.kernel_aliases.front(), options.by));
  }
  settings.figures = chosen_figures(options.figures);
  return settings;
}

std::vector<evidence::Comparison> compare_pairs(
    const std::vector<std::pair<Report, Report>>& reports, const FilePairs& files,
    const evidence::CompareOptions& settings) {
  std::vector<evidence::Comparison> comparisons;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    try {
      comparisons.push_back(
          evidence::compare_reports(reports[i].first, reports[i].second, settings));
    } catch (const std::invalid_argument& refused) {
      throw std::runtime_error(fmt::format("{} -> {}: refused: {}", files.pairs[i].first,
                                           files.pairs[i].second, refused.what()));
    }
  }
  return comparisons;
}

bool any_ambiguous(const std::vector<evidence::Comparison>& comparisons) {
  return std::any_of(comparisons.begin(), comparisons.end(), [](const evidence::Comparison& c) {
    return c.count(evidence::Verdict::ambiguous) > 0;
  });
}

int run_comparison(const CompareOptions& options) {
  FilePairs files = pair_paths(options.paths);
  std::vector<std::string> inputs;
  for (const auto& [base, next] : files.pairs) {
    inputs.push_back(base);
    inputs.push_back(next);
  }
  const OutputFiles outputs = evidence_outputs(inputs, {{"--json", options.json_path}});
  const evidence::CompareOptions settings = comparison_settings(options);
  std::vector<std::string> skipped;
  const std::vector<std::pair<Report, Report>> reports = read_pairs(files, options, skipped);
  const std::vector<evidence::Comparison> comparisons = compare_pairs(reports, files, settings);

  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  nlohmann::json pairs = nlohmann::json::array();
  bool regressed = false;
  for (std::size_t i = 0; i < comparisons.size(); ++i) {
    screen << evidence::render_comparison(comparisons[i], files.pairs[i].first,
                                          files.pairs[i].second);
    regressed = regressed || comparisons[i].regressed();
    nlohmann::json entry = evidence::to_json(comparisons[i]);
    entry["base"] = files.pairs[i].first;
    entry["new"] = files.pairs[i].second;
    pairs.push_back(entry);
  }
  for (const std::string& path : skipped) screen << skipped_ceilings_note(path);
  for (const std::string& path : files.only_in_base)
    screen << "file only in base: " << path << '\n';
  for (const std::string& path : files.only_in_new) screen << "file only in new: " << path << '\n';
  const evidence::GeometricMean geomean = evidence::geometric_mean(comparisons);
  if (comparisons.size() > 1) {
    screen << "total: " << evidence::render_verdict_counts(comparisons) << '\n';
    screen << "total: " << evidence::render_geometric_mean(geomean) << '\n';
  }
  if (regressed) screen << "REGRESSION: at least one row is SLOWER or FAILED\n";
  const bool ambiguous = any_ambiguous(comparisons);
  if (ambiguous && options.fail_on_ambiguous) {
    screen << "AMBIGUOUS: at least one row's medians and samples disagree (--fail-on-ambiguous)\n";
  }
  // A gate that compared nothing would pass every change: with
  // --fail-on-regression, no compared row is a failure of its own.
  const bool nothing_compared = compared_rows(comparisons) == 0;
  if (nothing_compared) {
    screen << "NOTHING COMPARED: no row has a time on both sides (check that both reports sweep "
              "the same configurations)\n";
  }
  screen << std::flush;

  if (outputs.has("--json")) {
    const nlohmann::json document{
        {"schema", "cuflash-roofline/compare/v2"},
        {"threshold",
         settings.threshold ? nlohmann::json(*settings.threshold) : nlohmann::json(nullptr)},
        {"significance", settings.significance},
        {"pairs", pairs},
        {"files_only_in_base", files.only_in_base},
        {"files_only_in_new", files.only_in_new},
        {"ceilings_skipped", skipped},
        {"regression", regressed},
        {"ambiguous", ambiguous},
        {"rows_compared", compared_rows(comparisons)},
        {"geomean", evidence::to_json(geomean)}};
    outputs.write({{"--json", json_text(document)}});
  }
  const bool gate_fails = regressed || nothing_compared || (ambiguous && options.fail_on_ambiguous);
  const bool gated = options.fail_on_regression || options.fail_on_ambiguous;
  return gate_fails && gated ? exit_code::verdict : exit_code::ok;
}

}  // namespace

void add_compare_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand(
      "compare",
      "compare matched rows of BASE and NEW reports (files, BASE NEW pairs, or two folders), or "
      "with --roofline list each report's fraction of roof");
  command->add_option("paths", options->paths, "BASE NEW [BASE NEW ...], or two folders")
      ->type_name("PATH")
      ->check(not_empty())
      ->required();
  command
      ->add_option("--threshold", options->threshold,
                   "relative change of the median beyond which a row is FASTER/SLOWER when its "
                   "samples agree, e.g. 0.05 (default: the larger relative stdev of the two "
                   "rows)")
      ->type_name("REL")
      ->check(finite_number(0.0, 1e6));
  command
      ->add_option("--significance", options->significance,
                   "Mann-Whitney p-value below which a row's samples establish a change "
                   "(default 0.05)")
      ->type_name("P")
      ->check(finite_number_above(0.0, 0.5));
  command->add_flag("--fail-on-regression", options->fail_on_regression,
                    "exit 1 when any row is SLOWER or FAILED, or when no row was compared (the CI "
                    "gate; AMBIGUOUS rows do not fail it)");
  command->add_flag("--fail-on-ambiguous", options->fail_on_ambiguous,
                    "exit 1 when any row is AMBIGUOUS (its medians and samples disagree), or when "
                    "no row was compared");
  command->add_flag("--allow-unauditable", options->allow_unauditable,
                    "compare against a baseline that is not auditable (labelled in the output)");
  command->add_flag("--allow-cross-device", options->allow_cross_device,
                    "compare reports of different device models (labelled in the output)");
  command
      ->add_option("--match-kernel", options->kernel_aliases,
                   "BASE_KERNEL=NEW_KERNEL: treat a renamed kernel as the same one")
      ->type_name("OLD=NEW");
  command
      ->add_option("--by", options->by,
                   "how rows pair: kernel (the same kernel name, default), shape (every "
                   "base row against every new row of its shape, whatever the kernels: ours "
                   "over a peer's) or fastest (as shape, against the fastest base row of each "
                   "shape only: ours over the fastest peer)")
      ->type_name("KEY")
      ->check(CLI::IsMember({"kernel", "shape", "fastest"}).description(""));
  command
      ->add_option("--figures", options->figures,
                   "figure tags (docs/report-schema.md#figures) to show base -> new under each "
                   "matched row, e.g. achieved/TFLOPs,achieved/fraction_of_roof")
      ->type_name("TAGS")
      ->check(not_empty());
  CLI::Option* roofline =
      command->add_flag("--roofline", options->roofline,
                        "treat every path as a report and list each row's fraction of its roof, "
                        "worst first");
  // The roofline view compares each report with its own roof, not two
  // reports: an option of the comparison would be ignored, so it is refused.
  for (const char* name :
       {"--threshold", "--significance", "--fail-on-regression", "--fail-on-ambiguous",
        "--allow-unauditable", "--allow-cross-device", "--match-kernel", "--by", "--figures"}) {
    roofline->excludes(name);
  }
  add_output_option(*command, "--json", options->json_path, "also write the comparison as JSON");
  add_version_flag(*command);
  command->callback([options, &status] {
    status.exit_status = options->roofline ? run_roofline_view(*options) : run_comparison(*options);
  });
}

}  // namespace cfr::app
