#pragma once

#include <string>

// The small report peers/torch_sdpa.py recorded on a GPU (fixtures/README.md).
inline std::string peer_fixture_path() {
  return std::string(CFR_SOURCE_ROOT) + "/tests/peers/fixtures/torch_sdpa_small.json";
}
