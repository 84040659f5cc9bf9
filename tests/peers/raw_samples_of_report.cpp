#include "raw_samples_of_report.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/core/output_check.hpp"
#include "roofline/report/auditability.hpp"

using namespace cfr;

namespace {

// The reasons import-samples derives again: auditability's, the ceiling's
// mismatch, the unfinished run's.
bool derived_reason(const std::string& reason, const std::vector<std::string>& failures) {
  return std::find(failures.begin(), failures.end(), reason) != failures.end() ||
         (reason.starts_with("ceiling '") &&
          reason.find("is not the measuring device's") != std::string::npos) ||
         reason == "the measurement did not finish: not every configuration ran";
}

evidence::RawProvenance raw_provenance(const Report& report) {
  const Provenance& p = report.provenance;
  evidence::RawProvenance raw{p.created_utc, p.command, p.host, p.environment, {}, true};
  const std::vector<std::string> failures = auditability_failures(report);
  for (const std::string& reason : p.reasons) {
    if (reason.starts_with("interrupted") || reason.starts_with("incomplete:") ||
        reason == "the measurement did not finish: not every configuration ran") {
      raw.finished = false;
    }
    if (!derived_reason(reason, failures)) raw.reasons.push_back(reason);
  }
  return raw;
}

// A fp16 or bf16 row judged against fp32_simt was computed in fp32; fp32 I/O
// is fp32_simt whatever the path, so it says nothing.
std::optional<ArithmeticPath> arithmetic_of(const ResultRow& row) {
  if (row.problem.dtype == DType::fp32) return std::nullopt;
  return row.compute_unit == ComputeUnit::fp32_simt ? ArithmeticPath::fp32_simt
                                                    : ArithmeticPath::tensor_for_dtype;
}

std::vector<evidence::RawBackend> backends_of(const Report& report) {
  std::vector<evidence::RawBackend> backends;
  std::vector<bool> known;  // whether a row has said the backend's arithmetic
  for (const ResultRow& row : report.results) {
    auto found = std::find_if(backends.begin(), backends.end(), [&](const evidence::RawBackend& b) {
      return b.kernel == row.kernel;
    });
    if (found == backends.end()) {
      backends.push_back({row.kernel, ArithmeticPath::tensor_for_dtype});
      known.push_back(false);
      found = backends.end() - 1;
    }
    const std::size_t index = static_cast<std::size_t>(found - backends.begin());
    const auto arithmetic = arithmetic_of(row);
    if (!arithmetic) continue;
    if (known[index] && found->arithmetic != *arithmetic) {
      throw std::invalid_argument(row.kernel + ": its rows disagree about its arithmetic");
    }
    found->arithmetic = *arithmetic;
    known[index] = true;
  }
  return backends;
}

// A report keeps each tensor's errors but not max |ref|, which the max-abs
// bound is relative to: the stand-in is twice the smallest max |ref| under
// which a passed check passes, and the smallest positive double for a failed
// one, so the verdict is derived again as recorded. No figure reads it.
evidence::RawCheck raw_check(const Correctness& correctness, DType dtype) {
  const double max_abs_relative = tolerance_for(dtype).max_abs_relative;
  evidence::RawCheck check{correctness.reference, {}};
  for (const TensorError& error : correctness.tensors) {
    CheckResult result;
    result.rel_l2_err = error.rel_l2_err;
    result.max_abs_err = error.max_abs_err;
    result.all_finite = error.rel_l2_err != non_finite_error;
    result.ref_max_abs = correctness.passed ? 2 * error.max_abs_err / max_abs_relative
                                            : std::numeric_limits<double>::min();
    check.tensors.push_back({error.tensor, result});
  }
  return check;
}

evidence::RawRow raw_row(const ResultRow& row) {
  evidence::RawRow raw{row.kernel, row.direction, row.problem,  row.device.value_or(0),
                       row.status, row.reason,    std::nullopt, std::nullopt};
  if (row.correctness) {
    // A row that was checked ran: its status and reason follow from the check and the samples.
    raw.status = RowStatus::ok;
    raw.reason.clear();
    raw.check = raw_check(*row.correctness, row.problem.dtype);
    raw.timing = row.timing;
  }
  return raw;
}

std::vector<std::string> import_options(const Report& report) {
  const CeilingRecord& ceiling = report.ceiling;
  if (ceiling.source != "datasheet") {
    throw std::invalid_argument(fmt::format("the ceiling is {}'s {}: the file is not in the report",
                                            ceiling.gpu, ceiling.source));
  }
  std::optional<FlopConvention> convention;
  for (const ResultRow& row : report.results) {
    if (!row.model) continue;
    if (convention && *convention != row.model->flops.convention) {
      throw std::invalid_argument("the rows use two FLOP conventions");
    }
    convention = row.model->flops.convention;
  }
  std::vector<std::string> options{
      "--gpu",
      ceiling.gpu,
      "--ceiling",
      "datasheet",
      "--flop-convention",
      std::string(to_string(convention.value_or(FlopConvention::exact)))};
  // datasheet_ceiling's source_detail: "<table> (bandwidth: <document>)"
  const std::string table =
      ceiling.source_detail.substr(0, ceiling.source_detail.find(" (bandwidth: "));
  if (table != "configs/gpus.json (built in)") {
    options.insert(options.end(), {"--gpu-table", table});
  }
  return options;
}

}  // namespace

Reimport raw_samples_of_report(const Report& report) {
  Reimport out;
  out.raw.tool = report.tool;
  out.raw.provenance = raw_provenance(report);
  out.raw.devices = report.devices;
  out.raw.backends = backends_of(report);
  for (const ResultRow& row : report.results) out.raw.rows.push_back(raw_row(row));
  out.options = import_options(report);
  return out;
}
