#pragma once

// Measures one attention configuration on one device: inputs from a seed,
// outputs poisoned, a correctness check against the fp32 reference, then the
// cold timer, in the stages of row_stages.hpp. Host C++ over the CUDA
// runtime; the kernels stay in kernels/*.cu.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/measure/cold_timer.hpp"
#include "roofline/core/attention_problem.hpp"
#include "roofline/model/check_sample.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "roofline/report/report.hpp"

namespace cfr::bench {

struct BenchSettings {
  measure::TimingOptions timing;
  std::uint64_t seed = 20261202;
  // The FLOPs a check's reference may spend before the check is sub-sampled
  // (roofline/model/check_sample.hpp, docs/checks.md).
  double check_budget_flops = default_check_budget_flops;
  // sweep --energy: the board's energy around a run of each row's launches.
  bool energy = false;
};

struct BenchResult {
  RowStatus status = RowStatus::ok;
  std::string reason;
  std::optional<Timing> timing;
  std::optional<Correctness> correctness;
  std::optional<Energy> energy;  // with BenchSettings::energy, for a timed row
  // A sticky CUDA error: the device's context is unusable for the rest of the run.
  bool device_lost = false;
};

// Everything one device keeps across configurations: the stream, the cuBLAS
// handle, the L2 flusher and the last reference result (shared by every
// kernel of the same problem, since their inputs come from the same seed).
class DeviceSession {
 public:
  explicit DeviceSession(int device);
  ~DeviceSession();
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  int device() const;
  BenchResult run(const KernelDescription& kernel, const AttentionProblem& problem,
                  const BenchSettings& settings);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cfr::bench
