// The figure table (roofline/report/figures.hpp) is the one place a figure is
// defined: these tests add nothing, they walk row_figures() and check that
// every entry reaches the JSON writer and reader, the `table` columns and
// legend, and docs/report-schema.md, and that a row writes no value without
// one. (Audit coverage: tests/evidence/test_audit_figures.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/figures_doc.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_table.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/energy_readings.hpp"
#include "tests/roofline/profiled_row.hpp"
#include "tests/source_text.hpp"

using namespace cfr;
using nlohmann::json;

namespace {

// One measured row of every built-in kernel (so every traffic model has a
// row it applies to), one with a historical claim, one profiled row and one
// with its energy measured: between them every figure has a value.
Report every_figure_report() {
  Report r;
  r.provenance.source = ProvenanceSource::measured;
  r.ceiling = test::h200_profile_ceiling();
  r.ceiling.instruction_TFLOPs = test::h200_instruction_roofs();
  const AttentionProblem problem{1, 8, 1024, 64, true, DType::fp16};
  for (const KernelDescription& kernel : kernel_catalog) {
    ResultRow row = model_row(kernel, problem, r.ceiling, FlopConvention::exact, test::h200_cc,
                              test::h200_l2_inputs());
    row.timing = Timing{};
    row.timing->samples_ms = {0.5, 0.52, 0.49, 0.51};
    row.timing->summary = summarize(row.timing->samples_ms);
    row.achieved = achieved_figures(*row.model, row.timing->summary.median, r.ceiling);
    r.results.push_back(row);
  }
  // A plugin kernel that counts its own bytes (traffic `plugin`): 5e7 B.
  ResultRow own = r.results[1];
  own.kernel = "own_count";
  const KernelRecord record{
      own.direction, TrafficModelKind::plugin, own.tile, own.compute_unit, nullptr, 5e7};
  own.model = model_figures(record, problem, r.ceiling, FlopConvention::exact);
  own.achieved = achieved_figures(*own.model, own.timing->summary.median, r.ceiling);
  r.results.push_back(own);
  ResultRow claimed = r.results.front();
  claimed.kernel = "cuflash-attn-v0.4.0";  // a historical row: one row per configuration
  claimed.claimed =
      ClaimedFigures{"a document", 0.5, 1.1, 2.2, 0.07, 140, 3, 15, "memory-bound", 13.6};
  r.results.push_back(claimed);
  ResultRow profiled = test::profiled_row(r.ceiling);
  test::add_why_counters(*profiled.profile);  // and the cycle and "why" figures
  profiled.timing->sm_clock_MHz = 1980;
  profiled.profile->derived = profile_figures(profiled, r.ceiling, test::h200_cc);
  r.results.push_back(profiled);
  ResultRow energy =
      model_row(kernel_catalog.front(), {1, 16, 1024, 64, true, DType::fp16}, r.ceiling,
                FlopConvention::exact, test::h200_cc, test::h200_l2_inputs());
  energy.timing = r.results.front().timing;
  energy.achieved = achieved_figures(*energy.model, energy.timing->summary.median, r.ceiling);
  energy.energy = test::measured_energy();
  record_energy_figures(*energy.energy, energy.model->flops.counted());
  r.results.push_back(energy);
  return r;
}

bool absent(const FigureValue& value) {
  return std::holds_alternative<std::monostate>(value);
}

const json* at_path(const json& row, std::string_view path) {
  const json* node = &row;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

std::string read_text(const std::string& path) {
  return cfr::test::read_source_text(path);
}

}  // namespace

TEST_CASE("every figure has a unique tag, column label and JSON key, and a way to read it") {
  std::set<std::string_view> tags;
  std::set<std::string_view> keys;
  for (const Figure& f : row_figures()) {
    INFO(f.tag);
    CHECK(tags.insert(f.tag).second);
    CHECK(!f.label.empty());
    CHECK(!f.description.empty());
    CHECK(f.read != nullptr);
    CHECK(f.view() == (f.store == nullptr));  // only a view has no key and nothing to store
    if (!f.view()) CHECK(keys.insert(f.json).second);
    CHECK(find_figure(f.tag) == &f);
  }
  const std::vector<std::string> columns = table_column_names();
  CHECK(std::set<std::string>(columns.begin(), columns.end()).size() == columns.size());
  CHECK_THROWS_WITH(figure("model/speed"), "unknown figure 'model/speed'");
}

TEST_CASE("every stored figure is written at its key and read back to the same value") {
  const Report original = every_figure_report();
  const json written = to_json(original);
  const Report back = report_from_json(json::parse(written.dump()));
  for (const Figure& f : row_figures()) {
    INFO(f.tag);
    std::size_t rows_with_value = 0;
    for (std::size_t i = 0; i < original.results.size(); ++i) {
      const FigureValue value = figure_value(f, original.results[i]);
      CHECK(figure_value(f, back.results[i]) == value);
      if (absent(value)) continue;
      ++rows_with_value;
      if (f.view()) continue;
      const json* stored = at_path(written["results"][i], f.json);
      REQUIRE(stored != nullptr);
      if (f.word()) {
        CHECK(*stored == std::get<std::string>(value));
      } else {
        CHECK(stored->get<double>() == std::get<double>(value));
      }
    }
    CHECK(rows_with_value > 0);  // the sample gives every figure a value
  }
  CHECK(to_json(back) == written);
}

TEST_CASE("every figure is a table column in text, CSV and Markdown, with its legend line") {
  const Report report = every_figure_report();
  for (const Figure& f : row_figures()) {
    INFO(f.tag);
    const std::string label(f.label);
    const std::string cell = format_figure(f, figure_value(f, report.results.back()));
    // CSV carries the number at full precision (issue 12: not rounded).
    const std::string raw = format_figure_raw(f, figure_value(f, report.results.back()));
    const std::string csv = render_table(report, TableFormat::csv, {label});
    CHECK(csv.starts_with(label + "\n"));
    CHECK(csv.ends_with("\n" + raw + "\n"));  // the last row's cell
    const std::string text = render_table(report, TableFormat::text, {label});
    CHECK(text.starts_with(label));
    CHECK(text.find(cell) != std::string::npos);
    CHECK(render_table(report, TableFormat::markdown, {label}).starts_with("| " + label));
    CHECK(render_legend(report, {label})
              .starts_with(fmt::format("{}: {} ({}", f.label, f.description, to_string(f.source))));
  }
}

TEST_CASE("CSV prints a figure scaled by its display at full precision, empty when absent") {
  CHECK(format_figure_raw(figure("model/bytes"), 8624013312.0) == "8.624013312");
  CHECK(format_figure_raw(figure("achieved/fraction_of_roof"), 0.1234) == "12.34");
  CHECK(format_figure_raw(figure("model/ai"), FigureValue{}).empty());
  CHECK(format_figure_raw(figure("model/regime"), std::string("memory-bound")) == "memory-bound");
}

TEST_CASE("a figure prints scaled by its display at its precision, and '-' when absent") {
  // 8,624,013,312 B of the seed shape's kv_reload traffic (test_traffic_model.cpp).
  CHECK(format_figure(figure("model/bytes"), 8624013312.0) == "8.624");
  CHECK(display_unit(figure("model/bytes")) == "GB");
  CHECK(format_figure(figure("achieved/fraction_of_roof"), 0.1234) == "12.3");
  CHECK(display_unit(figure("achieved/fraction_of_roof")) == "%");
  CHECK(format_figure(figure("model/regime"), std::string("memory-bound")) == "memory-bound");
  CHECK(format_figure(figure("measured/median_ms"), FigureValue()) == "-");
}

TEST_CASE("a word a figure does not know is refused by the reader, naming the key") {
  json document = to_json(every_figure_report());
  document["results"][0]["traffic"]["dram_model"] = "l3_magic";
  CHECK_THROWS_WITH(report_from_json(document),
                    "results[0].traffic.dram_model: unknown DRAM model 'l3_magic'");
  document = to_json(every_figure_report());
  document["results"][0]["ridge"] = nullptr;  // the roofline figures are all or none
  CHECK_THROWS_WITH(report_from_json(document),
                    "results[0].ridge_distance: present, but ridge is null");
}

TEST_CASE("docs/report-schema.md's figure table is the one the descriptors generate") {
  // docs/update-figure-table.sh writes the section; an entry added, changed or removed
  // without running it fails here.
  const std::string schema = read_text(std::string(CFR_SOURCE_ROOT) + "/docs/report-schema.md");
  const std::string begin =
      "<!-- figures:begin (generated by docs/update-figure-table.sh; do not edit) -->\n";
  const std::string end = "\n<!-- figures:end -->";
  const std::size_t from = schema.find(begin);
  REQUIRE(from != std::string::npos);
  const std::size_t to = schema.find(end, from);
  REQUIRE(to != std::string::npos);
  const std::string generated = render_figures_doc();
  CHECK(schema.substr(from + begin.size(), to - from - begin.size()) + "\n" == generated);
  for (const Figure& f : row_figures()) {
    INFO(f.tag);
    CHECK(generated.find(fmt::format("| `{}` |", f.tag)) != std::string::npos);
    if (!f.view()) CHECK(generated.find(fmt::format("| `{}` |", f.json)) != std::string::npos);
  }
}

namespace {

// What a row writes that is not a figure: its configuration, the inputs and
// breakdown of its model, its sampling and check, and the counters a profile
// was derived from. A key ending in ".*" stands for every key under it.
const std::vector<std::string_view> not_figures{"kernel",
                                                "kernel_revision",
                                                "direction",
                                                "dtype",
                                                "batch",
                                                "heads",
                                                "seq_len",
                                                "head_dim",
                                                "kv_len",
                                                "kv_heads",
                                                "page_size",
                                                "causal",
                                                "tile",
                                                "tile.br",
                                                "tile.bc",
                                                "compute_unit",
                                                "status",
                                                "reason",
                                                "device",
                                                "flops.convention",
                                                "traffic.model",
                                                "traffic.breakdown.*",
                                                "traffic.l2_model.*",
                                                "traffic.kv_splits",
                                                "timing.samples_ms",
                                                "timing.warmup",
                                                "timing.l2_flush",
                                                "timing.l2_flush_mode",
                                                "timing.sm_clock_MHz",
                                                "timing.sm_clock_min_MHz",
                                                "timing.throttled",
                                                "timing.throttled_discarded",
                                                "timing.throttle_threshold_percent",
                                                "timing.kept_throttled",
                                                "timing.noise_target_met",
                                                "timing.stop_reason",
                                                "correctness.*",
                                                "claimed.source",
                                                "profile.tool",
                                                "profile.version",
                                                "profile.command",
                                                "profile.unavailable",
                                                "profile.counters",
                                                "profile.launches.*",
                                                "profile.process_timing.*",
                                                "profile.timer_floor.*",
                                                "energy.counter",
                                                "energy.unavailable",
                                                "energy.launches",
                                                "energy.readings",
                                                "energy.probes",
                                                "energy.idle_readings"};

bool named_not_figure(const std::string& key) {
  return std::any_of(not_figures.begin(), not_figures.end(), [&key](std::string_view name) {
    if (name.ends_with(".*")) return key.starts_with(name.substr(0, name.size() - 1));
    return key == name;
  });
}

// Each key path under `node` whose value is not an object (a list is one value).
void leaf_keys(const json& node, const std::string& path, std::set<std::string>& out) {
  if (!node.is_object()) {
    out.insert(path);
    return;
  }
  for (const auto& [key, value] : node.items()) {
    leaf_keys(value, path.empty() ? key : path + "." + key, out);
  }
}

void row_keys(const json& document, std::set<std::string>& keys) {
  for (const json& row : document["results"]) leaf_keys(row, "", keys);
}

}  // namespace

TEST_CASE("every value a row writes is a figure's key or named here as not a figure") {
  // A figure written by hand beside the table, without a descriptor, fails here, and so does
  // a descriptor removed while committed reports hold its key: the keys of the sample rows (a
  // served shape among them) as written, and of every committed report as it is and as read
  // and written again.
  std::set<std::string> keys;
  Report sample = every_figure_report();
  // A served shape: one query token against a paged cache of 4096 keys, 32 query heads over
  // 8 K/V heads, split across CTAs (fa2_decode).
  const AttentionProblem decode{1, 32, 1, 128, false, DType::fp16, 4096, 8, 16};
  sample.results.push_back(model_row(fa2_decode_kernel, decode, sample.ceiling,
                                     FlopConvention::exact, test::h200_cc, test::h200_l2_inputs()));
  REQUIRE(sample.results.back().status == RowStatus::ok);
  row_keys(to_json(sample), keys);
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(CFR_SOURCE_ROOT) + "/results")) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const json document = json::parse(read_text(entry.path().string()));
    if (document.value("schema", "") != report_schema) continue;  // a ceilings report
    row_keys(document, keys);
    row_keys(to_json(report_from_json(document)), keys);
  }
  std::set<std::string_view> figure_keys;
  for (const Figure& f : row_figures()) figure_keys.insert(f.json);
  for (const std::string& key : keys) {
    INFO(key);
    CHECK((figure_keys.contains(key) || named_not_figure(key)));
  }
  // ... and the names are not a blanket: each one names something written.
  for (std::string_view name : not_figures) {
    INFO(name);
    CHECK(std::any_of(keys.begin(), keys.end(), [name](const std::string& key) {
      return name.ends_with(".*") ? key.starts_with(name.substr(0, name.size() - 1)) : key == name;
    }));
  }
}

TEST_CASE("the regime column is the counters' on a profiled row, else the interval's") {
  const Report r = every_figure_report();
  const Figure& verdict = figure("model/verdict");
  const Figure& point = figure("model/regime");
  CHECK(verdict.view());
  for (const ResultRow& row : r.results) {
    if (!row.model || !row.model->roofline) continue;
    const FigureValue shown = figure_value(verdict, row);
    if (row.profile && row.profile->collected()) {
      CHECK(std::get<std::string>(shown) == *row.profile->derived.dram.regime);
    } else if (row.model->interval_regime) {
      CHECK(std::get<std::string>(shown) == to_string(*row.model->interval_regime));
    } else {
      CHECK(shown == figure_value(point, row));
    }
  }
  // A row whose interval straddles the ridge reads `uncertain`, whatever its point says.
  ResultRow straddling = r.results.front();
  REQUIRE(straddling.model->roofline);
  straddling.model->interval_regime = IntervalRegime::uncertain;
  CHECK(std::get<std::string>(figure_value(verdict, straddling)) == "uncertain");
  CHECK(std::get<std::string>(figure_value(point, straddling)) != "uncertain");
}
