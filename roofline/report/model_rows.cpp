#include "roofline/report/model_rows.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

namespace cfr {

std::vector<ResultRow> model_rows(std::span<const ModelRowRequest> requests,
                                  const CeilingRecord& ceiling, FlopConvention convention,
                                  std::optional<ComputeCapability> gpu_cc,
                                  const std::optional<L2ModelInputs>& l2, unsigned threads) {
  std::vector<ResultRow> rows(requests.size());
  std::vector<std::exception_ptr> errors(requests.size());
  const auto compute = [&](std::size_t i) {
    try {
      rows[i] =
          model_row(*requests[i].kernel, requests[i].problem, ceiling, convention, gpu_cc, l2);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  const auto plugin = [&](std::size_t i) { return requests[i].kernel->own_bytes != nullptr; };
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < requests.size(); i = next++) {
      if (!plugin(i)) compute(i);
    }
  };
  const unsigned count = threads > 0 ? threads : std::max(1U, std::thread::hardware_concurrency());
  {
    std::vector<std::jthread> workers;
    for (unsigned t = 1; t < std::min<std::size_t>(count, requests.size()); ++t) {
      try {
        workers.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the others do the work
      }
    }
    work();
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (plugin(i)) compute(i);
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return rows;
}

}  // namespace cfr
