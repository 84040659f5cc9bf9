#pragma once

// What the four evidence subcommands share: the way they read report files
// and write outputs.

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "output_files.hpp"
#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report.hpp"

namespace cfr::app {

// Every file is read and checked against the schema before any work starts;
// the first unusable one throws std::runtime_error "FILE: key path: problem".
std::vector<Report> read_reports(const std::vector<std::string>& paths);

// The same for commands that also take `ceilings` reports (plot, compare's
// folders, table): each file goes to its list by its schema.
struct EvidenceFiles {
  std::vector<std::string> report_paths;
  std::vector<Report> reports;
  std::vector<std::string> ceilings_paths;
  std::vector<CeilingsReport> ceilings;
};
EvidenceFiles read_evidence_files(const std::vector<std::string>& paths);

// A `ceilings` file as a roof (plot --ceilings, report): its measured DRAM
// bandwidth, read bandwidth where it has one, and the best measured peak per
// compute unit. Throws std::runtime_error "PATH: figures: ..." for a file
// without a positive dram_bandwidth or with a value out of range.
CeilingRecord measured_roof(const CeilingsReport& measured, const std::string& path);

// A measured roof of the device some report ran on, named as that report's
// ceiling names the GPU: the file says "NVIDIA H200" (the device), the
// report "NVIDIA H200 SXM 141GB" (the GPU table), and the chart's title read
// both for one GPU (issue 24). Only where the report's ceiling is the
// device's (matches_device); otherwise the roof keeps the device's name.
void name_like_reports(CeilingRecord& roof, const std::vector<Report>& reports);

// The *.json files directly inside `folder`, sorted by name. Throws when it
// is not a readable folder.
std::vector<std::string> json_files_in(const std::string& folder);

bool is_folder(const std::string& path);

// The output targets of an evidence command, checked before any file is read
// or written; none may be one of the `inputs`. `targets`: {option, path},
// an empty path for an option not given.
OutputFiles evidence_outputs(const std::vector<std::string>& inputs,
                             const std::vector<std::pair<std::string, std::string>>& targets);

}  // namespace cfr::app
