#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "roofline/evidence/roof_fraction.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;

TEST_CASE("fraction of roof lists measured rows worst first") {
  const Report report = measured_report();
  const auto rows = roof_fractions(report);
  REQUIRE(rows.size() == 8);  // the skipped row has no achieved figures
  for (std::size_t i = 1; i < rows.size(); ++i) CHECK(rows[i - 1].fraction <= rows[i].fraction);
  // sample_reports.cpp times fa1_scalar at 6x its roof time and fa1_wmma at 2.5x, so the scalar
  // rows (1/6 of the roof, at the median) come first.
  CHECK(rows.front().location.find("fa1_scalar") != std::string::npos);
  CHECK(rows.front().fraction == Approx(1.0 / 6));
  CHECK(rows.back().fraction == Approx(1.0 / 2.5));
  const std::string text = render_roof_fractions(rows, report, "sweep.json");
  CHECK(text.starts_with(
      "== sweep.json: fraction of the roof (h200 datasheet ceiling), worst first"));
  CHECK(to_json(rows)[0]["fraction_of_roof"] == Approx(1.0 / 6));
}

TEST_CASE("a model report has no fractions; a historical one is marked not evidence") {
  CHECK(roof_fractions(model_report()).empty());
  const Report historical = seed_report("A100");
  const std::string text = render_roof_fractions(roof_fractions(historical), historical, "h.json");
  CHECK(text.find("!! NOT AUDITABLE (source historical): not evidence") != std::string::npos);
}
