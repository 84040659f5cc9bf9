#include "report_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "roofline/core/gzip_text.hpp"
#include "roofline/core/strict_json.hpp"
#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr::app {

namespace {

[[noreturn]] void fail(const std::string& path, std::string_view problem) {
  throw std::runtime_error(fmt::format("{}: {}", path, problem));
}

// Regular files and pipes (`<(...)`, a named pipe) are read; a FIFO nobody
// writes to reads as empty instead of blocking, and a device such as
// /dev/zero is refused instead of read without end.
std::string read_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == EACCES || errno == ENOTDIR) {
      fail(path, "cannot open (missing or unreadable)");
    }
    fail(path, fmt::format("cannot open ({})", std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail(path, std::strerror(errno));
  if (S_ISDIR(info.st_mode)) fail(path, "is a folder, not a file");
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode)) {
    fail(path, "not a regular file (a device or socket is not read)");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(path, fmt::format("read failed ({})", std::strerror(errno)));
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::size_t>(got) > max_input_bytes) {
      fail(path,
           fmt::format("larger than {} MiB; not a file this tool wrote", max_input_bytes >> 20));
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

// A file's text, inflated where it is gzip; a missing FILE is read from
// FILE.gz where that exists (committed reports over 1 MB: results/README.md).
std::string read_text(const std::string& path) {
  std::string source = path;
  if (std::error_code error; !std::filesystem::exists(path, error) &&
                             std::filesystem::is_regular_file(path + ".gz", error)) {
    source = path + ".gz";
  }
  std::string bytes = read_bytes(source);
  try {
    return text_of_file_bytes(std::move(bytes), max_input_bytes);
  } catch (const std::runtime_error& error) {
    fail(source, error.what());
  }
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_text(path);
  if (text.empty()) fail(path, "empty file");
  try {
    return parse_strict_json(text);
  } catch (const InputError& error) {
    const std::string what = error.what();
    if (what.starts_with("not valid JSON")) fail(path, what + ": truncated or not a report");
    fail(path, what);
  }
}

namespace {

// The file's document through `parse`; a schema error names the file.
template <typename Parse>
auto read_document(const std::string& path, Parse parse) -> decltype(parse(nlohmann::json())) {
  const nlohmann::json document = read_json_file(path);
  try {
    return parse(document);
  } catch (const InputError& error) {
    fail(path, error.what());
  }
}

}  // namespace

Report read_report_file(const std::string& path) {
  return read_document(path, report_from_json);
}

CeilingsReport read_ceilings_file(const std::string& path) {
  return read_document(path, ceilings_from_json);
}

std::variant<Report, CeilingsReport> read_report_or_ceilings(const std::string& path) {
  return read_document(path, [](const nlohmann::json& document) {
    const auto schema = document.is_object() ? document.find("schema") : document.end();
    if (schema != document.end() && *schema == ceilings_schema) {
      return std::variant<Report, CeilingsReport>(ceilings_from_json(document));
    }
    return std::variant<Report, CeilingsReport>(report_from_json(document));
  });
}

std::string json_text(const nlohmann::json& document) {
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cfr::app
