#include "roofline/core/gzip_text.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <zlib.h>

namespace cfr {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(std::string_view bytes, std::size_t max_bytes) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip wrapper, not zlib's or raw deflate.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    throw std::runtime_error("gzip: cannot start zlib's inflate");
  }
  struct Ender {
    z_stream* stream;
    ~Ender() { inflateEnd(stream); }
  } ender{&stream};
  std::string text;
  char buffer[1 << 16];
  std::size_t offset = 0;
  while (true) {
    const std::size_t chunk = std::min<std::size_t>(bytes.size() - offset, 1u << 30);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + offset));
    stream.avail_in = static_cast<uInt>(chunk);
    int status = Z_OK;
    do {
      stream.next_out = reinterpret_cast<Bytef*>(buffer);
      stream.avail_out = sizeof buffer;
      status = inflate(&stream, Z_NO_FLUSH);
      if (status != Z_OK && status != Z_STREAM_END) {
        throw std::runtime_error(
            fmt::format("gzip: corrupt stream ({})", stream.msg ? stream.msg : "no message"));
      }
      text.append(buffer, sizeof buffer - stream.avail_out);
      if (text.size() > max_bytes) {
        throw std::runtime_error(fmt::format(
            "gzip: inflates to more than {} MiB; not a file this tool wrote", max_bytes >> 20));
      }
    } while (stream.avail_out == 0 && status != Z_STREAM_END);
    offset += chunk - stream.avail_in;
    if (status == Z_STREAM_END) {
      // Another member may follow (concatenated .gz files are one file).
      if (offset >= bytes.size()) return text;
      if (!is_gzip(bytes.substr(offset))) {
        throw std::runtime_error("gzip: bytes after the end of the stream");
      }
      if (inflateReset(&stream) != Z_OK) throw std::runtime_error("gzip: cannot restart inflate");
      continue;
    }
    if (offset >= bytes.size()) throw std::runtime_error("gzip: truncated stream");
  }
}

std::string text_of_file_bytes(std::string bytes, std::size_t max_bytes) {
  return is_gzip(bytes) ? gunzip(bytes, max_bytes) : bytes;
}

bool is_report_file_name(std::string_view name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

std::string_view report_name_of(std::string_view file_name) {
  return file_name.ends_with(".json.gz") ? file_name.substr(0, file_name.size() - 3) : file_name;
}

}  // namespace cfr
