#include "png_pixels.hpp"

#include <zlib.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

std::uint32_t big_endian(std::string_view bytes, std::size_t at) {
  if (at + 4 > bytes.size()) throw std::runtime_error("PNG: truncated");
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = value << 8 | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a);
  const int pb = std::abs(p - b);
  const int pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Undoes one scanline's filter (PNG spec §9) in place, `previous` the line above.
void unfilter(int filter, unsigned char* line, const unsigned char* previous, std::size_t size,
              std::size_t channels) {
  for (std::size_t i = 0; i < size; ++i) {
    const int left = i >= channels ? line[i - channels] : 0;
    const int up = previous != nullptr ? previous[i] : 0;
    const int up_left = previous != nullptr && i >= channels ? previous[i - channels] : 0;
    int add = 0;
    switch (filter) {
      case 0: break;
      case 1: add = left; break;
      case 2: add = up; break;
      case 3: add = (left + up) / 2; break;
      case 4: add = paeth(left, up, up_left); break;
      default: throw std::runtime_error("PNG: unknown filter " + std::to_string(filter));
    }
    line[i] = static_cast<unsigned char>(line[i] + add);
  }
}

}  // namespace

Pixels decode_png(std::string_view file) {
  if (!file.starts_with("\x89PNG\r\n\x1a\n")) throw std::runtime_error("PNG: no signature");
  Pixels pixels;
  std::size_t channels = 0;
  std::string compressed;
  for (std::size_t at = 8; at + 8 <= file.size();) {
    const std::uint32_t length = big_endian(file, at);
    const std::string_view type = file.substr(at + 4, 4);
    if (at + 12 + length > file.size()) throw std::runtime_error("PNG: truncated chunk");
    const std::string_view data = file.substr(at + 8, length);
    if (type == "IHDR") {
      pixels.width = big_endian(data, 0);
      pixels.height = big_endian(data, 4);
      const int depth = data[8];
      const int colour = data[9];
      if (depth != 8 || (colour != 2 && colour != 6) || data[12] != 0) {
        throw std::runtime_error("PNG: not 8-bit RGB(A) without interlace");
      }
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed.append(data);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0) throw std::runtime_error("PNG: no IHDR");
  const std::size_t stride = pixels.width * channels;
  std::vector<unsigned char> raw((stride + 1) * pixels.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(compressed.data()),
                 compressed.size()) != Z_OK ||
      size != raw.size()) {
    throw std::runtime_error("PNG: the image data does not inflate to its size");
  }
  pixels.rgb.reserve(std::size_t{pixels.width} * pixels.height);
  for (std::uint32_t y = 0; y < pixels.height; ++y) {
    unsigned char* line = &raw[y * (stride + 1) + 1];
    const unsigned char* previous = y == 0 ? nullptr : &raw[(y - 1) * (stride + 1) + 1];
    unfilter(line[-1], line, previous, stride, channels);
    for (std::uint32_t x = 0; x < pixels.width; ++x) {
      const unsigned char* p = line + x * channels;
      pixels.rgb.push_back(std::uint32_t{p[0]} << 16 | std::uint32_t{p[1]} << 8 | p[2]);
    }
  }
  return pixels;
}
