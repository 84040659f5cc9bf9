#pragma once

// Parses sweep axes given on the command line: "1024,2048", a range
// "1024:16384:x2" (geometric) or "64:256:+64" (arithmetic), or a mix
// "128,1024:4096:x2". Throws std::invalid_argument naming the bad text.

#include <cstdint>
#include <string_view>
#include <vector>

namespace cfr {

std::vector<std::int64_t> parse_axis_values(std::string_view text, std::string_view axis_name);

}  // namespace cfr
