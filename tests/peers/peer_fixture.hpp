#pragma once

#include <string>

// The small report peers/torch_sdpa.py recorded on a GPU (fixtures/README.md).
inline std::string peer_fixture_path() {
  return std::string(CFR_SOURCE_ROOT) + "/tests/peers/fixtures/torch_sdpa_small.json";
}

// Hand-built raw samples of served shapes (GQA decode, speculative tokens, a
// paged cache, a causal mask leaving queries no key), samples synthetic
// (fixtures/README.md).
inline std::string served_samples_path() {
  return std::string(CFR_SOURCE_ROOT) + "/tests/peers/fixtures/torch_sdpa_served.samples.json";
}
