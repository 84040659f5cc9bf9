#include "roofline/report/auditability.hpp"

#include <fmt/format.h>

namespace cfr {

namespace {

bool measured(const Provenance& p, std::vector<std::string>& failures) {
  if (p.source == ProvenanceSource::measured) return true;
  failures.push_back(
      fmt::format("provenance source is '{}', not a measurement", to_string(p.source)));
  return false;
}

void check_tool_and_provenance(const ToolInfo& tool, const Provenance& p,
                               std::vector<std::string>& failures) {
  if (tool.git_commit.empty() || tool.git_commit == "unknown") {
    failures.push_back("the tool's git commit is unknown");
  } else if (tool.git_dirty) {
    failures.push_back(fmt::format("built from a dirty tree (commit {} plus uncommitted changes)",
                                   tool.git_commit));
  }
  if (p.created_utc.empty()) failures.push_back("provenance.created_utc is missing");
  if (p.command.empty()) failures.push_back("provenance.command is missing");
  if (p.host.empty()) failures.push_back("provenance.host is missing");
}

void check_device_record(const DeviceRecord& d, std::vector<std::string>& failures) {
  if (d.name.empty() || d.cc.empty() || d.driver.empty() || d.runtime.empty() ||
      d.pci_bus_id.empty() || d.sm_count <= 0 || d.memory_bytes <= 0 || d.clock_MHz <= 0) {
    failures.push_back(fmt::format("device {} record is incomplete", d.index));
  }
}

void check_environment(const Report& report, std::vector<std::string>& failures) {
  check_tool_and_provenance(report.tool, report.provenance, failures);
  if (report.devices.empty()) failures.push_back("no device record");
  for (const DeviceRecord& d : report.devices) check_device_record(d, failures);
  if (report.ceiling.matches_device == std::optional<bool>(false)) {
    failures.push_back(
        fmt::format("the ceiling is {}'s, not the measuring device's", report.ceiling.gpu));
  }
}

}  // namespace

std::vector<std::string> auditability_failures(const Report& report) {
  std::vector<std::string> failures;
  if (!measured(report.provenance, failures)) return failures;
  check_environment(report, failures);
  std::size_t ok_rows = 0;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (row.status != RowStatus::ok) continue;
    ++ok_rows;
    if (!row.device) failures.push_back(row_location(i, row) + " names no device");
    if (!row.timing || row.timing->samples_ms.empty()) {
      failures.push_back(row_location(i, row) + " has no raw samples");
    }
    if (!row.correctness) {
      failures.push_back(row_location(i, row) + " was not checked against the reference");
    } else if (!row.correctness->passed) {
      failures.push_back(row_location(i, row) + " is ok but failed its correctness check");
    }
  }
  if (ok_rows == 0) failures.push_back("no row was measured successfully");
  return failures;
}

std::vector<std::string> auditability_failures(const CeilingsReport& report) {
  std::vector<std::string> failures;
  if (!measured(report.provenance, failures)) return failures;
  check_tool_and_provenance(report.tool, report.provenance, failures);
  check_device_record(report.device, failures);
  for (std::size_t i = 0; i < report.figures.size(); ++i) {
    if (report.figures[i].samples.empty()) {
      failures.push_back(
          fmt::format("figures[{}] ({}) has no raw samples", i, report.figures[i].figure));
    }
  }
  if (report.figures.empty()) failures.push_back("no figure was measured");
  return failures;
}

}  // namespace cfr
