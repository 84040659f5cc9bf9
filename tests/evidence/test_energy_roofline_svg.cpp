// `plot --energy` (roofline/evidence/energy_roofline_svg): every ok row with
// energy figures is a point at its AI and FLOP/J; per compute unit of those
// rows, the energy roof min(FLOP/J, AI x B/J) and Choi et al.'s combined
// curve 1/(1/FLOP_per_J + 1/(AI x B_per_J)) from the energy ceilings, at the
// pixels their numbers map to. The rows' readings are
// tests/roofline/energy_readings.hpp's, the ceilings sample_reports'
// energy_ceilings().
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "chart_reading.hpp"
#include "roofline/evidence/energy_roofline_svg.hpp"
#include "roofline/evidence/log_axis.hpp"
#include "roofline/report/figures.hpp"
#include "sample_reports.hpp"
#include "tests/roofline/energy_readings.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

// every_kernel_report with the fa1_scalar row's energy measured too (a SIMT row
// beside the fa2_mma tensor row), at 300 W.
Report energy_report() {
  Report report = every_kernel_report();
  for (ResultRow& row : report.results) {
    if (row.kernel != "fa1_scalar") continue;
    row.energy = test::measured_energy();
    row.energy->readings = test::polled(300, 0.020, 0.001, 3.0);
    record_energy_figures(*row.energy, row.model->flops.counted());
  }
  return report;
}

ChartReading plot(const Report& report, const CeilingsReport& ceilings) {
  EnergyPlotOptions options;
  options.ceilings = &ceilings;
  options.ceilings_name = "ceilings-energy.json";
  EnergyPlotSummary summary;
  ChartReading p =
      read_chart(energy_roofline_svg({{"sweep-energy.json", &report}}, options, &summary));
  CHECK(summary.points == p.with_class("energy-point").size());
  CHECK(summary.roofs == p.with_class("energy-roof").size());
  return p;
}

}  // namespace

TEST_CASE("energy plot: a point per ok row with energy, at its AI and FLOP/J") {
  const Report report = energy_report();
  const ChartReading p = plot(report, energy_ceilings());
  const auto points = p.with_class("energy-point");
  REQUIRE(points.size() == 2);  // fa1_scalar and fa2_mma; the other rows have no energy
  for (const XmlElement* point : points) {
    const ResultRow& row = *std::find_if(
        report.results.begin(), report.results.end(),
        [&](const ResultRow& r) { return r.kernel == point->attribute("data-kernel"); });
    const double ai = *figure_number(figure("model/ai"), row);
    const double per_J = *row.energy->derived.flop_per_J;
    CHECK(point->number("data-ai") == Approx(ai));
    CHECK(point->number("data-flop-per-J") == Approx(per_J));
    CHECK(point->number("cx") == Approx(p.x.to_pixel(ai)).margin(0.01));
    CHECK(point->number("cy") == Approx(p.y.to_pixel(per_J / 1e9)).margin(0.01));
  }
}

TEST_CASE("energy plot: per unit, the roof and Choi's curve from the energy ceilings") {
  const CeilingsReport ceilings = energy_ceilings();
  const ChartReading p = plot(energy_report(), ceilings);
  const auto roofs = p.with_class("energy-roof");
  const auto curves = p.with_class("choi-curve");
  REQUIRE(roofs.size() == 2);  // fa1_scalar's fp32_simt, fa2_mma's fp16_tensor
  REQUIRE(curves.size() == 2);
  const double bytes_per_J = *ceilings.dram_bytes_per_J();
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    const XmlElement& roof = *roofs[i];
    const ComputeUnit unit = *parse_compute_unit(roof.attribute("data-unit"));
    const double flop_per_J = *ceilings.best_flop_per_J(unit);
    CHECK(roof.number("data-flop-per-J") == Approx(flop_per_J));
    CHECK(roof.number("data-bytes-per-J") == Approx(bytes_per_J));
    CHECK(roof.number("data-ridge") == Approx(flop_per_J / bytes_per_J));
    const auto corner = vertices(roof);
    REQUIRE(corner.size() == 3);  // slope start, ridge, right end
    CHECK(corner[1].first == Approx(p.x.to_pixel(flop_per_J / bytes_per_J)).margin(0.01));
    CHECK(corner[1].second == Approx(p.y.to_pixel(flop_per_J / 1e9)).margin(0.01));
    CHECK(corner[2].second == Approx(corner[1].second));  // flat after the ridge
    // Slope: AI x B/J at the start.
    CHECK(p.y.from_pixel(corner[0].second) ==
          Approx(p.x.from_pixel(corner[0].first) * bytes_per_J / 1e9).epsilon(1e-4));

    const XmlElement& curve = *curves[i];
    CHECK(curve.attribute("data-unit") == roof.attribute("data-unit"));
    const auto along = vertices(curve);
    REQUIRE(along.size() > 10);
    for (const auto& [x, y] : along) {
      const double ai = p.x.from_pixel(x);
      const double combined = 1 / (1 / flop_per_J + 1 / (ai * bytes_per_J));
      CHECK(p.y.from_pixel(y) == Approx(combined / 1e9).epsilon(1e-4));
      CHECK(combined < std::min(flop_per_J, ai * bytes_per_J));  // under the roof
    }
  }
  const std::string legend = [&] {
    std::string text;
    for (const XmlElement* e : p.with_class("legend")) {
      for (const XmlElement* t : find_all(*e, [](const XmlElement& x) { return x.name == "text"; }))
        text += t->text + "\n";
    }
    return text;
  }();
  CHECK(legend.find("Choi et al. combined") != std::string::npos);
  CHECK(legend.find("not strict bounds") != std::string::npos);
}

TEST_CASE("energy plot: ceilings without the DRAM copy's energy are refused by name") {
  const CeilingsReport plain = [] {
    CeilingsReport c = energy_ceilings();
    for (CeilingFigure& f : c.figures) {
      if (f.figure == "dram_bandwidth") f.energy.reset();
    }
    return c;
  }();
  const Report report = energy_report();
  EnergyPlotOptions options;
  options.ceilings = &plain;
  options.ceilings_name = "plain.json";
  CHECK_THROWS_WITH(energy_roofline_svg({{"r.json", &report}}, options),
                    "plain.json: no energy figures of dram_bandwidth (measure them with "
                    "`ceilings --energy`)");
}
