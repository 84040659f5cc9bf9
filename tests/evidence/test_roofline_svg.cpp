#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include "chart_reading.hpp"
#include "roofline/evidence/label_placer.hpp"
#include "roofline/evidence/log_axis.hpp"
#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/instruction_roof.hpp"
#include "sample_reports.hpp"
#include "tests/roofline/profiled_row.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

using Chart = ChartReading;

std::size_t ok_rows_with_achieved(const Report& report) {
  return static_cast<std::size_t>(
      std::count_if(report.results.begin(), report.results.end(), [](const ResultRow& r) {
        return r.status == RowStatus::ok && r.achieved && r.achieved->TFLOPs > 0;
      }));
}

}  // namespace

TEST_CASE("the chart parses as XML and has one point per ok row with achieved figures") {
  const Report report = measured_report();
  PlotSummary summary;
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, {}, &summary));
  const auto points = chart.with_class("point");
  REQUIRE(points.size() == ok_rows_with_achieved(report));
  CHECK(summary.points == 8);
  CHECK(chart.with_class("model-point").empty());
  for (const XmlElement* p : points) {
    const ResultRow* row = nullptr;
    for (const ResultRow& r : report.results) {
      if (r.kernel == p->attribute("data-kernel") &&
          std::to_string(r.problem.seq_len) == p->attribute("data-seq-len") &&
          (r.problem.causal ? "true" : "false") == p->attribute("data-causal") &&
          r.status == RowStatus::ok) {
        row = &r;
      }
    }
    REQUIRE(row != nullptr);
    // x = the row's AI, y = achieved TFLOP/s, as data and as pixels.
    CHECK(p->number("data-ai") == Approx(row->model->ai).epsilon(1e-9));
    CHECK(p->number("data-tflops") == Approx(row->achieved->TFLOPs).epsilon(1e-9));
    CHECK(p->attribute("data-auditable") == "true");
    CHECK(p->name == (row->problem.causal ? "path" : "circle"));  // causal by marker shape
    if (p->name == "circle") {
      CHECK(chart.x.from_pixel(p->number("cx")) == Approx(row->model->ai).epsilon(1e-3));
      CHECK(chart.y.from_pixel(p->number("cy")) == Approx(row->achieved->TFLOPs).epsilon(1e-3));
    }
  }
  // Labels name N. The sample's four points of each kernel sit within 10 px of each other, so
  // not every label has room: those without are left out rather than drawn over another.
  const auto labels = chart.with_class("point-label");
  CHECK(labels.size() <= points.size());
  CHECK(labels.size() >= points.size() - 1);
  CHECK(std::all_of(labels.begin(), labels.end(),
                    [](const XmlElement* e) { return e->text == "1K" || e->text == "4K"; }));
}

TEST_CASE("a point's data-row names its report and row (the HTML page links them by it)") {
  const Report first = measured_report();
  const Report second = model_report();
  const Chart chart = read_chart(roofline_svg({{"a.json", &first}, {"b.json", &second}}, {}));
  const std::vector<const Report*> reports{&first, &second};
  std::size_t linked = 0;
  for (const char* kind : {"point", "model-point"}) {
    for (const XmlElement* p : chart.with_class(kind)) {
      const std::string id = p->attribute("data-row");
      const auto dash = id.find('-');
      const std::size_t report = std::stoul(id.substr(0, dash));
      const std::size_t row = std::stoul(id.substr(dash + 1));
      REQUIRE(report < reports.size());
      REQUIRE(row < reports[report]->results.size());
      CHECK(p->attribute("data-report") == (report == 0 ? "a.json" : "b.json"));
      CHECK(p->number("data-ai") == Approx(reports[report]->results[row].model->ai));
      ++linked;
    }
  }
  CHECK(linked == ok_rows_with_achieved(first) + second.results.size());
}

TEST_CASE("each compute unit's roof meets the bandwidth slope at its ridge") {
  // fa1_scalar runs on fp32 SIMT, fa1_wmma on fp16 tensor cores: two roofs on the H200
  // datasheet, ridges 67 / 4.8 = 13.96 and 989.4 / 4.8 = 206.1 FLOP/byte.
  const Report report = measured_report();
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, {}));
  const auto roofs = chart.with_class("roof");
  REQUIRE(roofs.size() == 2);
  for (const XmlElement* roof : roofs) {
    const double peak = roof->number("data-peak-TFLOPs");
    const double bandwidth = roof->number("data-bandwidth-GBps");
    CHECK(bandwidth == 4800);
    CHECK(roof->number("data-ridge") == Approx(peak / bandwidth * 1e3));
    CHECK(roof->attribute("data-source") == "datasheet");
    CHECK(roof->attributes.count("stroke-dasharray") == 1);  // datasheet: dashed
    const auto v = vertices(*roof);
    REQUIRE(v.size() == 3);
    // Slope start on TFLOP/s = GB/s x FLOP/byte / 1000; the corner at (ridge, peak); flat after.
    CHECK(chart.y.from_pixel(v[0].second) ==
          Approx(bandwidth * chart.x.from_pixel(v[0].first) / 1e3).epsilon(1e-3));
    CHECK(chart.x.from_pixel(v[1].first) == Approx(peak / bandwidth * 1e3).epsilon(1e-3));
    CHECK(chart.y.from_pixel(v[1].second) == Approx(peak).epsilon(1e-3));
    CHECK(v[2].second == v[1].second);
    CHECK(v[2].first == Approx(chart.x.to_pixel(chart.x.max())));
  }
  const auto units = [&] {
    std::vector<std::string> out;
    for (const XmlElement* roof : roofs) out.push_back(roof->attribute("data-unit"));
    std::sort(out.begin(), out.end());
    return out;
  }();
  CHECK(units == std::vector<std::string>{"fp16_tensor", "fp32_simt"});
  const auto ridges = chart.with_class("ridge");
  REQUIRE(ridges.size() == 2);
  for (const XmlElement* ridge : ridges) {
    CHECK(chart.x.from_pixel(ridge->number("cx")) ==
          Approx(ridge->number("data-ridge")).epsilon(1e-3));
  }
}

TEST_CASE("the axes are log-log with decade ticks and labelled with units") {
  const Report report = measured_report();
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, {}));
  const auto axis_labels = chart.with_class("axis-label");
  REQUIRE(axis_labels.size() == 2);
  // Each axis is named by its figure (figures.cpp): label, description, unit.
  CHECK(axis_labels[0]->text.starts_with("AI: arithmetic intensity"));
  CHECK(axis_labels[0]->text.ends_with("(FLOP/B)"));
  CHECK(axis_labels[1]->text == "TFLOPS: counted FLOPs / median time (TFLOPS)");
  const auto ticks = chart.with_class("tick-label");
  CHECK(ticks.size() == chart.x.decades().size() + chart.y.decades().size());
  CHECK(std::any_of(ticks.begin(), ticks.end(),
                    [](const XmlElement* t) { return t->text == "100"; }));
  CHECK(chart.with_class("legend").size() == 1);
}

TEST_CASE("historical points are hollow and labelled unauditable") {
  const Report measured = measured_report();
  const Report historical = seed_report("H100");
  const Chart chart =
      read_chart(roofline_svg({{"sweep.json", &measured}, {"v0.4.0-h100.json", &historical}}, {}));
  const auto points = chart.with_class("point");
  CHECK(points.size() == 8 + 4);
  std::size_t hollow = 0;
  for (const XmlElement* p : points) {
    if (p->attribute("data-report") != "v0.4.0-h100.json") continue;
    CHECK(p->attribute("data-auditable") == "false");
    CHECK(p->attribute("fill") == "white");
    ++hollow;
  }
  CHECK(hollow == 4);
  const auto labels = chart.with_class("point-label");
  CHECK(std::count_if(labels.begin(), labels.end(),
                      [](const XmlElement* e) { return e->text.ends_with(" unauditable"); }) == 4);
  // Two ceilings now: the H200 and H100 datasheets each bring their roofs.
  CHECK(chart.with_class("roof").size() == 3);
  CHECK(chart.with_class("subtitle").at(0)->text.find("NOT evidence") != std::string::npos);
}

TEST_CASE("model rows are gray hollow markers at their roof, not points") {
  const Report model = model_report();
  PlotSummary summary;
  const Chart chart = read_chart(roofline_svg({{"model.json", &model}}, {}, &summary));
  CHECK(chart.with_class("point").empty());
  const auto projections = chart.with_class("model-point");
  REQUIRE(projections.size() == 8);
  CHECK(summary.model_points == 8);
  CHECK(projections[0]->number("data-tflops") ==
        Approx(model.results[0].model->roofline->roof_TFLOPs));
}

TEST_CASE("a measured ceiling is drawn solid beside the datasheet's dashed roof") {
  const Report report = measured_report();
  CeilingRecord measured;
  measured.gpu = "NVIDIA H200";
  measured.source = "measured";
  measured.bandwidth_GBps = 4270;  // about what a device copy reaches on the H200
  measured.peak_TFLOPs = {55, std::nullopt, 700, 700};
  PlotOptions options;
  options.extra_ceilings = {measured};
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, options));
  const auto roofs = chart.with_class("roof");
  REQUIRE(roofs.size() == 4);
  std::size_t solid = 0;
  for (const XmlElement* roof : roofs) {
    if (roof->attribute("data-source") != "measured") continue;
    ++solid;
    CHECK(roof->attributes.count("stroke-dasharray") == 0);
    CHECK(roof->number("data-ridge") == Approx(roof->number("data-peak-TFLOPs") / 4.27));
  }
  CHECK(solid == 2);
}

TEST_CASE("one roof per figures: a ceiling named twice is drawn, listed and titled once") {
  // results/h200/roofline.svg: the profiled reports' measured ceiling is named by the GPU
  // table, the same ceilings file passed to plot by the device; the legend listed each roof
  // twice and the title read "NVIDIA H200 SXM 141GB, NVIDIA H200" (issue 24).
  Report report = measured_report();
  report.ceiling.source = "measured";
  CeilingRecord same_file = report.ceiling;
  same_file.gpu = "NVIDIA H200";
  same_file.gpu_name.clear();
  PlotOptions options;
  options.extra_ceilings = {same_file};
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, options));
  const std::size_t units = 2;  // fa1_scalar: fp32 SIMT, fa1_wmma: fp16 tensor
  CHECK(chart.with_class("roof").size() == units);
  CHECK(chart.with_class("roof-label").size() <= units);
  CHECK(chart.with_class("legend-roof").size() == 1 + units);  // the DRAM slope, then each roof
  const auto titles = chart.with_class("title");
  REQUIRE(titles.size() == 1);
  CHECK(titles[0]->text == "Roofline: " + report.ceiling.gpu_name);
  // Other figures are another roof, drawn beside it.
  same_file.bandwidth_GBps *= 0.9;
  options.extra_ceilings = {same_file};
  const Chart two = read_chart(roofline_svg({{"sweep.json", &report}}, options));
  CHECK(two.with_class("roof").size() == 2 * units);
}

TEST_CASE("hostile strings in a report cannot break the document") {
  Report report = measured_report();
  report.results[0].kernel = "<script>&\"'\x01\xff";
  const Chart chart = read_chart(roofline_svg({{"a&b<c>.json", &report}}, {}));
  const auto points = chart.with_class("point");
  CHECK(std::any_of(points.begin(), points.end(), [](const XmlElement* p) {
    return p->attribute("data-kernel") == "<script>&\"'??" &&
           p->attribute("data-report") == "a&b<c>.json";
  }));
}

TEST_CASE("a profiled row is drawn at each memory level, tied, under an L2 roof") {
  // every_kernel_report's fa1_wmma row is profiled and its ceiling has an L2 bandwidth.
  const Report report = every_kernel_report();
  const Chart chart = read_chart(roofline_svg({{"profiled.json", &report}}, {}));
  const ResultRow* profiled = nullptr;
  for (const ResultRow& r : report.results) {
    if (r.profile) profiled = &r;
  }
  REQUIRE(profiled != nullptr);
  const auto levels = chart.with_class("level-point");
  REQUIRE(levels.size() == 2);
  for (const XmlElement* p : levels) {
    const ProfileLevel& level = p->attribute("data-level") == "dram"
                                    ? profiled->profile->derived.dram
                                    : profiled->profile->derived.l2;
    CHECK(p->number("data-ai") == Approx(*level.ai));
    CHECK(p->number("data-tflops") == Approx(profiled->achieved->TFLOPs));  // same FLOP/s
    CHECK(chart.x.from_pixel(p->number("x") + p->number("width") / 2) ==
          Approx(*level.ai).epsilon(1e-3));
  }
  REQUIRE(chart.with_class("level-tie").size() == 1);
  const XmlElement& tie = *chart.with_class("level-tie")[0];
  CHECK(tie.number("y1") == tie.number("y2"));
  std::size_t l2_roofs = 0;
  for (const XmlElement* roof : chart.with_class("roof")) {
    if (roof->attribute("data-level") != "l2") continue;
    ++l2_roofs;
    CHECK(roof->number("data-bandwidth-GBps") == 10000);
  }
  // One per compute unit of the ok rows: fp32 SIMT (fa1_scalar, fa1_bwd) and fp16 tensor.
  CHECK(l2_roofs == 2);
}

TEST_CASE("a label's box is the line box DejaVu Sans gives it in a browser") {
  // "16K" at 10 px: 3 glyphs of 0.66 em, 9.3 px above the baseline, 2.4 below
  // (label_placer.hpp; tests/html/test_browser.cpp checks the drawn boxes).
  const LabelBox box = text_box("16K", 100, 50, Anchor::end, 10);
  CHECK(box.left == Approx(100 - 19.8));
  CHECK(box.right == Approx(100));
  CHECK(box.top == Approx(50 - 9.3));
  CHECK(box.bottom == Approx(50 + 2.4));
}

TEST_CASE("no two labels overlap, even where two roofs share a peak") {
  // fp16 and bf16 tensor roofs share the H200's 989.4 TFLOP/s: their labels once shared a line.
  Report report = every_kernel_report();
  for (ResultRow row : std::vector<ResultRow>(report.results)) {
    if (row.compute_unit != ComputeUnit::fp16_tensor) continue;
    row.problem.dtype = DType::bf16;
    row.compute_unit = ComputeUnit::bf16_tensor;
    report.results.push_back(row);
  }
  const Chart chart = read_chart(roofline_svg({{"profiled.json", &report}}, {}));
  std::vector<LabelBox> boxes;
  for (const char* name : {"roof-label", "bandwidth-label", "point-label"}) {
    for (const XmlElement* t : chart.with_class(name)) {
      const std::string anchor =
          t->attributes.count("text-anchor") ? t->attribute("text-anchor") : std::string("start");
      boxes.push_back(text_box(t->text, t->number("x"), t->number("y"),
                               anchor == "end"      ? Anchor::end
                               : anchor == "middle" ? Anchor::middle
                                                    : Anchor::start,
                               t->number("font-size")));
    }
  }
  CHECK(chart.with_class("roof-label").size() >= 4);  // fp32 SIMT, fp16, bf16 and the L2 ones
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      INFO(i << " " << j);
      CHECK_FALSE(boxes[i].overlaps(boxes[j]));
    }
  }
  // Numbers at three significant digits: 989.4 TFLOP/s prints as 989, the ridge as 206.
  const auto roof_labels = chart.with_class("roof-label");
  CHECK(std::any_of(roof_labels.begin(), roof_labels.end(), [](const XmlElement* t) {
    return t->text.find("989 TFLOP/s, ridge 206 (datasheet)") != std::string::npos;
  }));
}

TEST_CASE("marker size encodes the head dim") {
  Report report = measured_report();
  ResultRow wide = *std::find_if(
      report.results.begin(), report.results.end(),
      [](const ResultRow& r) { return r.status == RowStatus::ok && !r.problem.causal; });
  wide.problem.head_dim = 128;
  report.results.push_back(wide);
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, {}));
  double r64 = 0;
  double r128 = 0;
  for (const XmlElement* p : chart.with_class("point")) {
    if (p->name != "circle") continue;
    (p->attribute("data-head-dim") == "128" ? r128 : r64) = p->number("r");
  }
  CHECK(r64 == 5);
  CHECK(r128 == 7);
}

TEST_CASE("the legend names every slope and roof, whether or not its label fits the plot") {
  // The H200 datasheet: one DRAM slope (4800 GB/s), fp32 SIMT and fp16 tensor roofs.
  const Report report = measured_report();
  const Chart chart = read_chart(roofline_svg({{"sweep.json", &report}}, {}));
  std::vector<std::string> lines;
  for (const XmlElement* e : chart.with_class("legend-roof")) lines.push_back(e->text);
  CHECK(lines == std::vector<std::string>{"DRAM 4800 GB/s (datasheet)",
                                          "  fp32_simt 67.0, ridge 14.0 (datasheet)",
                                          "  fp16_tensor 989, ridge 206 (datasheet)"});
}

TEST_CASE("a ceiling with a read bandwidth adds the read slope, labelled once, over decode rows") {
  // every_kernel_report's ceiling has a 4600 GB/s read stream beside its 4800 GB/s DRAM figure;
  // its fa2_decode row (split_kv, fp16 tensor) is judged on it.
  Report report = every_kernel_report();
  const auto read_roofs = [](const Chart& chart) {
    std::vector<const XmlElement*> out;
    for (const XmlElement* roof : chart.with_class("roof")) {
      if (roof->attribute("data-level") == "dram_read") out.push_back(roof);
    }
    return out;
  };
  const auto count_text = [](const Chart& chart, std::string_view name, std::string_view start) {
    const auto texts = chart.with_class(name);
    return std::count_if(texts.begin(), texts.end(),
                         [&](const XmlElement* t) { return t->text.starts_with(start); });
  };
  const Chart chart = read_chart(roofline_svg({{"decode.json", &report}}, {}));
  const auto roofs = read_roofs(chart);
  REQUIRE(roofs.size() == 1);
  const XmlElement& roof = *roofs[0];
  CHECK(roof.attribute("data-unit") == "fp16_tensor");
  CHECK(roof.number("data-bandwidth-GBps") == 4600);
  CHECK(roof.number("data-ridge") == Approx(roof.number("data-peak-TFLOPs") / 4.6));
  const auto v = vertices(roof);
  REQUIRE(v.size() == 3);
  CHECK(chart.y.from_pixel(v[0].second) ==
        Approx(4600 * chart.x.from_pixel(v[0].first) / 1e3).epsilon(1e-3));
  // One slope label in the legend (and at most one on the plot), as for the DRAM slope.
  CHECK(count_text(chart, "legend-roof", "DRAM read 4600 GB/s (datasheet)") == 1);
  CHECK(count_text(chart, "bandwidth-label", "DRAM read") <= 1);
  CHECK(count_text(chart, "legend-roof", "  fp16_tensor read 989") == 1);
  // The decode row's point sits under the read slope, where its % BW says it is.
  std::size_t decode_points = 0;
  for (const XmlElement* p : chart.with_class("point")) {
    if (p->attribute("data-kernel") != "fa2_decode") continue;
    ++decode_points;
    CHECK(p->number("data-tflops") < 4600 * p->number("data-ai") / 1e3);
  }
  CHECK(decode_points == 1);

  // Without a read bandwidth the chart has no read slope, and its legend no read roof.
  report.ceiling.read_bandwidth_GBps.reset();
  const Chart copy_only = read_chart(roofline_svg({{"decode.json", &report}}, {}));
  CHECK(read_roofs(copy_only).empty());
  CHECK(count_text(copy_only, "legend-roof", "DRAM read") == 0);

  // A measured ceiling with one draws its read slope over the same rows, solid.
  CeilingRecord measured = report.ceiling;
  measured.source = "measured";
  measured.read_bandwidth_GBps = 4500;
  PlotOptions options;
  options.extra_ceilings = {measured};
  const Chart with_measured = read_chart(roofline_svg({{"decode.json", &report}}, options));
  const auto extra = read_roofs(with_measured);
  REQUIRE(extra.size() == 1);
  CHECK(extra[0]->attribute("data-source") == "measured");
  CHECK(extra[0]->attributes.count("stroke-dasharray") == 0);
  // ... but not over square rows only: no row there streams its reads.
  const Report square = measured_report();
  CHECK(read_roofs(read_chart(roofline_svg({{"sweep.json", &square}}, options))).empty());
}

TEST_CASE("a ceilings file draws the instruction roofs of rows measured against the datasheet") {
  // measured_report's rows were judged on the datasheet ceiling: they record no instruction roof.
  const Report report = measured_report();
  std::set<std::string> expected;
  for (const ResultRow& r : report.results) {
    REQUIRE_FALSE(r.model->instruction_roof);
    const KernelDescription* kernel = find_kernel(r.kernel);
    REQUIRE(kernel != nullptr);
    if (const auto figure = instruction_figure(kernel->instruction, r.problem.dtype)) {
      expected.insert(*figure);
    }
  }
  REQUIRE_FALSE(expected.empty());
  CeilingRecord measured;
  measured.gpu = "NVIDIA H200";
  measured.source = "measured";
  measured.bandwidth_GBps = 3943;
  measured.peak_TFLOPs = {65, std::nullopt, 953, 966};
  measured.instruction_TFLOPs = cfr::test::h200_instruction_roofs();
  PlotOptions options;
  options.extra_ceilings = {measured};
  const Chart with_file = read_chart(roofline_svg({{"sweep.json", &report}}, options));
  std::set<std::string> drawn;
  for (const XmlElement* roof : with_file.with_class("roof")) {
    if (roof->attribute("data-level") != "instruction") continue;
    const std::string name = roof->attribute("data-instruction");
    drawn.insert(name);
    CHECK(roof->number("data-peak-TFLOPs") == measured.instruction_TFLOPs.at(name));
  }
  CHECK(drawn == expected);
  // Without the file, the datasheet has no instruction figure to draw.
  const Chart datasheet_only = read_chart(roofline_svg({{"sweep.json", &report}}, {}));
  for (const XmlElement* roof : datasheet_only.with_class("roof")) {
    CHECK(roof->attribute("data-level") != "instruction");
  }
}

TEST_CASE("each row's AI interval is a bar through its marker, and each instruction has its roof") {
  // every_kernel_report: built-in kernels under the H200's L2-aware model (each with an
  // interval) and a ceiling with each instruction's measured peak.
  const Report report = every_kernel_report();
  const Chart chart = read_chart(roofline_svg({{"every.json", &report}}, {}));
  std::size_t with_interval = 0;
  std::set<std::string> instructions;
  for (const ResultRow& r : report.results) {
    if (r.status != RowStatus::ok || !r.achieved) continue;
    if (r.model->ai_low) ++with_interval;
    if (r.model->instruction_roof) instructions.insert(r.model->instruction_roof->figure);
  }
  REQUIRE(with_interval > 0);
  const auto bars = chart.with_class("ai-interval");
  CHECK(bars.size() == with_interval);
  for (const XmlElement* bar : bars) {
    CHECK(bar->number("data-ai-low") <= bar->number("data-ai-high"));
    bool matched = false;
    for (const XmlElement* p : chart.with_class("point")) {
      if (p->attribute("data-row") != bar->attribute("data-row")) continue;
      matched = true;
      CHECK(bar->number("data-ai-low") <= p->number("data-ai") * (1 + 1e-12));
      CHECK(p->number("data-ai") <= bar->number("data-ai-high") * (1 + 1e-12));
    }
    CHECK(matched);
  }
  REQUIRE_FALSE(instructions.empty());
  std::set<std::string> drawn;
  for (const XmlElement* roof : chart.with_class("roof")) {
    if (roof->attribute("data-level") != "instruction") continue;
    const std::string name = roof->attribute("data-instruction");
    drawn.insert(name);
    CHECK(roof->number("data-peak-TFLOPs") == report.ceiling.instruction_TFLOPs.at(name));
  }
  CHECK(drawn == instructions);

  // A chart over another x figure has no model interval to draw.
  PlotOptions measured_x;
  measured_x.x_figure = "profile/ai_dram";
  CHECK(read_chart(roofline_svg({{"every.json", &report}}, measured_x))
            .with_class("ai-interval")
            .empty());
}
