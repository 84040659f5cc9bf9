#include <catch2/catch.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/interval_coverage.hpp"
#include "tests/roofline/profiled_row.hpp"

using namespace cfr;
using namespace cfr::evidence;

namespace {

// Three profiled rows whose ncu DRAM bytes sit below, inside and above an
// interval set by hand around each row's point, and one unprofiled row.
Report report_around_interval() {
  Report r;
  r.provenance.source = ProvenanceSource::measured;
  r.ceiling = test::h200_profile_ceiling();
  for (const double measured_over_point : {0.5, 1.1, 1.6}) {
    ResultRow row = test::profiled_row(r.ceiling);
    const double point = row.model->dram_bytes();
    row.model->dram_interval = DramInterval{0.8 * point, 1.5 * point};
    row.profile->derived.dram.bytes = measured_over_point * point;
    r.results.push_back(row);
  }
  ResultRow unprofiled = r.results.front();
  unprofiled.profile.reset();
  r.results.push_back(unprofiled);
  return r;
}

}  // namespace

TEST_CASE("interval coverage counts profiled rows inside the interval and the point's ±25 %") {
  const IntervalCoverage c = interval_coverage(report_around_interval());
  CHECK(c.rows == 3);
  CHECK(c.inside == 1);
  CHECK(c.point_within_25 == 1);  // 1.1: within; 0.5 and 1.6: not
  REQUIRE(c.outside.size() == 2);
  CHECK(c.outside[0].row == 0);
  CHECK(c.outside[1].row == 2);
  CHECK(describe(c) ==
        "ncu DRAM bytes inside the L2-aware interval on 1 of 3 profiled rows, the point within "
        "±25 % on 1");
  CHECK(describe(IntervalCoverage{}).empty());
}

TEST_CASE("audit notes the coverage and each row outside the interval, without failing") {
  const AuditResult result = audit_report(report_around_interval());
  std::size_t outside_notes = 0;
  bool summary = false;
  for (const Finding& f : result.findings) {
    if (f.message.find("outside the L2-aware interval") != std::string::npos) {
      CHECK(f.kind == FindingKind::note);
      ++outside_notes;
    }
    summary =
        summary || f.message.rfind("ncu DRAM bytes inside the L2-aware interval on 1 of 3", 0) == 0;
  }
  CHECK(outside_notes == 2);
  CHECK(summary);
}
