#pragma once
// What the tests that measure rows through bench::DeviceSession share: quick
// timing settings and a registered kernel's description by name.
#include <string_view>

#include <catch2/catch.hpp>

#include "kernels/bench/attention_bench.hpp"
#include "kernels/kernel_registry.hpp"

namespace cfr::kernels::testing {

// A few samples: these tests check a row's status, not its time.
inline bench::BenchSettings quick() {
  bench::BenchSettings settings;
  settings.timing.warmup_runs = 1;
  settings.timing.min_samples = 3;
  settings.timing.max_seconds = 0.05;
  return settings;
}

inline const KernelDescription& kernel(std::string_view name) {
  const KernelEntry* entry = registry().find(name);
  REQUIRE(entry != nullptr);
  return entry->description;
}

}  // namespace cfr::kernels::testing
