#pragma once

// The Nsight Compute recordings under tests/roofline/fixtures/ncu/ (README
// there says how each was made).

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cfr::test {

inline std::string fixture_path(const std::string& name) {
  return std::string(CFR_SOURCE_ROOT) + "/tests/roofline/fixtures/ncu/" + name;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string read_fixture(const std::string& name) {
  return read_text(fixture_path(name));
}

}  // namespace cfr::test
