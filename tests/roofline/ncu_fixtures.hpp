#pragma once

// The Nsight Compute recordings under tests/roofline/fixtures/ncu/ (README
// there says how each was made).

#include <string>

#include "tests/source_text.hpp"

namespace cfr::test {

inline std::string fixture_path(const std::string& name) {
  return std::string(CFR_SOURCE_ROOT) + "/tests/roofline/fixtures/ncu/" + name;
}

inline std::string read_text(const std::string& path) {
  return read_source_text(path);
}

inline std::string read_fixture(const std::string& name) {
  return read_text(fixture_path(name));
}

}  // namespace cfr::test
