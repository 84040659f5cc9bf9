#pragma once

// The model rows of many (kernel, problem) points at once, on several
// threads: the L2-aware model simulates up to a few tenths of a second a row,
// and a what-if sweep of hundreds of rows should stay interactive
// (docs/model.md, "Cost").

#include <optional>
#include <span>
#include <vector>

#include "roofline/report/row_model.hpp"

namespace cfr {

struct ModelRowRequest {
  const KernelDescription* kernel = nullptr;
  AttentionProblem problem;
};

// model_row of each request, in order: the rows are those of calling
// model_row for each request in turn, whatever the thread count. Built-in
// kernels' rows are computed on `threads` threads (0: one per hardware
// thread); a row whose kernel counts its own bytes (a plugin's) on the
// calling thread only, so a plugin need not be thread-safe. The exception of
// the first request that throws, in request order, is rethrown.
std::vector<ResultRow> model_rows(std::span<const ModelRowRequest> requests,
                                  const CeilingRecord& ceiling, FlopConvention convention,
                                  std::optional<ComputeCapability> gpu_cc,
                                  const std::optional<L2ModelInputs>& l2, unsigned threads = 0);

}  // namespace cfr
