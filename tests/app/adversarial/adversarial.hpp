#pragma once

// What the adversarial suite (one file per class of bad input, issue 12)
// shares: a scratch folder per test case, inputs made by the binary itself,
// and the one shape every refusal must have.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../evidence/sample_reports.hpp"  // measured_report(), source_path()
#include "../cli_runner.hpp"

// A folder of its own under /tmp, removed with everything in it at the end.
// `entries()` lists what is inside, so a test can say a refused command wrote
// nothing, not even a temporary file.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::string path(std::string_view name) const;
  std::string write(std::string_view name, std::string_view text) const;
  std::string write_json(std::string_view name, const nlohmann::json& document) const;
  std::vector<std::string> entries() const;  // names directly inside, sorted

  const std::string dir;
};

// Runs the binary (no shell, no CUDA device, bounded time and memory).
CliResult run(const std::vector<std::string>& arguments, const CliLimits& limits = {});

// Documents to break: a model report the binary writes itself (fa1_wmma,
// N = 1024 and 2048, the H200 ceiling), and committed files (configs/gpus.json,
// configs/historical/v0.4.0.json, results/h200/ceilings.json).
nlohmann::json model_report_json();
nlohmann::json committed(const std::string& relative_path);  // a file of the source tree

// The shape of every refusal: exit `code`, exactly one line on stderr that
// starts with "cuflash-roofline: error: " and contains each needle, nothing
// on stdout, within the time limit.
void check_refused(const CliResult& result, const std::vector<std::string>& needles, int code = 2);
