#pragma once

// What tests/gpu's variant tools share: their command line and their timing
// (not the sweep's measure/ timer: `samples` event-timed calls of `launch`,
// each after an L2 flush, after three warm-up calls, and their median).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"

namespace cfr::gpu_tools {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename Launch>
std::vector<double> time_cold(Launch&& launch, cudaStream_t stream, measure::L2Flusher& flusher,
                              int samples) {
  measure::CudaEvent start, stop;
  std::vector<double> out;
  for (int i = -3; i < samples; ++i) {
    CFR_CUDA_CHECK(flusher.flush(stream));
    CFR_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    CFR_CUDA_CHECK(launch());
    CFR_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    CFR_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CFR_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (i >= 0) out.push_back(ms);
  }
  return out;
}

// time_cold for several launches taken in turn, one sample of each per round,
// so a clock that changes during the run moves every launch's samples alike
// (one launch's samples after another's would compare two clocks).
template <typename Launch>
std::vector<std::vector<double>> time_cold_in_turn(const std::vector<Launch>& launches,
                                                   cudaStream_t stream, measure::L2Flusher& flusher,
                                                   int samples) {
  std::vector<std::vector<double>> out(launches.size());
  for (int i = -3; i < samples; ++i) {
    for (std::size_t k = 0; k < launches.size(); ++k) {
      const std::vector<double> one = time_cold(launches[k], stream, flusher, 1);
      if (i >= 0) out[k].push_back(one.front());
    }
  }
  return out;
}

// Whether a variant's name is chosen by `filter`: a comma-separated list of
// parts, each a substring of the names it chooses or, after '=', one whole
// name (so that one call can time a variant without its suffixed twins).
// An empty filter chooses every name; an empty part chooses none.
inline bool chosen_by(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = std::min(filter.find(',', start), filter.size());
    const std::string part = filter.substr(start, end - start);
    const bool exact = !part.empty() && part[0] == '=';
    if (exact ? name == part.substr(1) : !part.empty() && name.find(part) != std::string::npos) {
      return true;
    }
    if (end == filter.size()) return false;
    start = end + 1;
  }
}

// run(variant) for the variant named `name`; 2 and a message if none is.
template <typename Variant, typename Run>
int with_named_variant(const std::vector<Variant>& variants, const char* name, Run&& run) {
  for (const Variant& variant : variants) {
    if (variant.name == name) return run(variant);
  }
  std::fprintf(stderr, "no variant %s\n", name);
  return 2;
}

// `--once NAME HEADS SEQ_LEN CAUSAL`: once(variant, heads, seq_len, causal),
// one launch of the named variant for Nsight Compute; otherwise
// check_and_time(variant) for each variant chosen by argv[1] (chosen_by; all
// without it), which returns false when the variant failed its check.
template <typename Variant, typename Once, typename CheckAndTime>
int variant_tool_main(int argc, char** argv, const std::vector<Variant>& variants, Once&& once,
                      CheckAndTime&& check_and_time) {
  if (argc == 6 && std::string(argv[1]) == "--once") {
    return with_named_variant(variants, argv[2], [&](const Variant& variant) {
      return once(variant, std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]) != 0);
    });
  }
  const char* filter = argc > 1 ? argv[1] : "";
  int failures = 0;
  for (const Variant& variant : variants) {
    if (!chosen_by(variant.name, filter)) continue;
    if (!check_and_time(variant)) ++failures;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace cfr::gpu_tools
