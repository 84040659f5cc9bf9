#pragma once

// Just enough of PNG to check a screenshot: 8-bit RGB or RGBA, not
// interlaced (what Chromium writes), inflated with zlib and unfiltered.
// Throws std::runtime_error for anything else.

#include <cstdint>
#include <string_view>
#include <vector>

struct Pixels {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint32_t> rgb;  // 0xRRGGBB, row by row

  std::uint32_t at(std::uint32_t x, std::uint32_t y) const { return rgb[y * width + x]; }
};

Pixels decode_png(std::string_view file);
