#include "output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include <fmt/format.h>

namespace cfr::app {

namespace {

enum class Kind { standard_output, standard_error, regular_file, in_place };

struct Identity {
  dev_t device = 0;
  ino_t inode = 0;
  friend bool operator==(const Identity&, const Identity&) = default;
};

std::string error_text(int error) {
  return std::strerror(error);
}

std::optional<std::string> real_path(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return std::nullopt;
  return std::string(resolved);
}

// "a/b/c.json" -> {"a/b", "c.json"}; "c.json" -> {".", "c.json"}.
std::pair<std::string, std::string> split_folder(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string describe_file_type(mode_t mode) {
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file, character device or FIFO";
}

// A new file beside `final_path`, so that the rename stays in one file system.
struct Temporary {
  std::string path;
  int fd = -1;
};

Temporary create_temporary(const std::string& folder, const std::string& base) {
  static std::atomic<unsigned> counter{0};
  const std::string stem = base.substr(0, 64);
  for (int attempt = 0; attempt < 100; ++attempt) {
    Temporary t;
    t.path = fmt::format("{}/.{}.{}-{}.tmp", folder, stem, ::getpid(), counter++);
    t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (t.fd >= 0) return t;
    if (errno != EEXIST) return {t.path, -errno};
  }
  return {"", -EEXIST};
}

// Writes all of `text` to fd; returns 0 or an errno.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

}  // namespace

struct OutputFiles::Target {
  std::string key;
  std::string option;
  std::string path;  // as given
  Kind kind = Kind::regular_file;
  std::string final_path;  // regular file: what the rename replaces (links resolved)
  std::string folder;      // regular file: where its temporary goes
  std::string base;        // regular file: its name, for the temporary's name
  std::optional<Identity> identity;
  int fd = -1;  // in place: held open from add(), so a FIFO's reader stays attached

  ~Target() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(std::string_view problem) const {
    throw std::runtime_error(fmt::format("{} {}: {}", option, path, problem));
  }
};

OutputFiles::OutputFiles() = default;
OutputFiles::~OutputFiles() = default;
OutputFiles::OutputFiles(OutputFiles&&) noexcept = default;
OutputFiles& OutputFiles::operator=(OutputFiles&&) noexcept = default;

void OutputFiles::protect_input(const std::string& path) {
  // By identity, so that a hard link or another spelling of the file counts.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) inputs_.push_back({info.st_dev, info.st_ino});
}

namespace {

// Checks a regular (or not yet existing) file target: its folder exists and
// takes a new file, probed by creating and removing a temporary there.
void check_writable_folder(const std::string& folder, const std::string& base, const auto& fail) {
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0) {
    fail(fmt::format("folder '{}' {}", folder,
                     errno == ENOENT ? "does not exist" : error_text(errno)));
  }
  if (!S_ISDIR(info.st_mode)) fail(fmt::format("'{}' is not a folder", folder));
  const Temporary probe = create_temporary(folder, base);
  if (probe.fd < 0) {
    fail(fmt::format("cannot create a file in '{}' ({})", folder, error_text(-probe.fd)));
  }
  ::close(probe.fd);
  ::unlink(probe.path.c_str());
}

}  // namespace

void OutputFiles::add(std::string_view option, const std::string& path) {
  add(option, option, path);
}

void OutputFiles::add(std::string_view key, std::string_view option, const std::string& path) {
  if (path.empty()) return;
  auto target = std::make_unique<Target>();
  target->key = std::string(key);
  target->option = std::string(option);
  target->path = path;
  const auto fail = [&](std::string_view problem) { target->fail(problem); };

  const auto add_stream = [&](Kind kind) {
    target->kind = kind;
    const bool to_stderr = kind == Kind::standard_error;
    for (const auto& other : targets_) {
      if (other->kind == target->kind) {
        fail(fmt::format("{} already writes to {}; give one of them a file", other->option,
                         to_stderr ? "stderr" : "stdout"));
      }
    }
    // What the stream is (a file, a pipe), so that naming it again by path
    // (/dev/stdout, the file it is redirected to) is caught below.
    struct stat stream {};
    if (::fstat(to_stderr ? STDERR_FILENO : STDOUT_FILENO, &stream) == 0) {
      target->identity = Identity{stream.st_dev, stream.st_ino};
    }
    refuse_same_target(*target);
    targets_.push_back(std::move(target));
  };
  if (path == "-" || path == "stdout" || path == "stderr") {
    add_stream(path == "stderr" ? Kind::standard_error : Kind::standard_output);
    return;
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) fail(error_text(errno));
    if (path.ends_with('/')) fail("names a folder, not a file");
    auto [folder, base] = split_folder(path);
    check_writable_folder(folder, base, fail);
    target->folder = folder;
    target->base = base;
    target->final_path = fmt::format("{}/{}", real_path(folder).value_or(folder), base);
  } else {
    if (::stat(path.c_str(), &info) != 0) {
      fail(fmt::format("a symbolic link that leads nowhere ({})", error_text(errno)));
    }
    target->identity = Identity{info.st_dev, info.st_ino};
    // /dev/stdout, /proc/self/fd/1, or the file standard output is redirected
    // to: that stream, as "-" is, so the text moves to stderr instead of
    // landing between two documents.
    for (const auto& [fd, kind] : {std::pair{STDOUT_FILENO, Kind::standard_output},
                                   std::pair{STDERR_FILENO, Kind::standard_error}}) {
      struct stat stream {};
      if (::fstat(fd, &stream) == 0 &&
          *target->identity == Identity{stream.st_dev, stream.st_ino}) {
        add_stream(kind);
        return;
      }
    }
    if (S_ISDIR(info.st_mode)) fail("is a folder, not a file");
    if (S_ISREG(info.st_mode)) {
      target->final_path = real_path(path).value_or(path);
      std::tie(target->folder, target->base) = split_folder(target->final_path);
      check_writable_folder(target->folder, target->base, fail);
    } else if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) {
      target->kind = Kind::in_place;
      target->fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (target->fd < 0) {
        fail(errno == ENXIO ? "a FIFO that nobody reads"
                            : fmt::format("cannot open for writing ({})", error_text(errno)));
      }
      ::fcntl(target->fd, F_SETFL, ::fcntl(target->fd, F_GETFL) & ~O_NONBLOCK);
    } else {
      fail(describe_file_type(info.st_mode) + ": not written");
    }
  }

  for (const auto& [device, inode] : inputs_) {
    if (target->identity && *target->identity == Identity{device, inode}) {
      fail("is a file this command reads; it would be overwritten");
    }
  }
  refuse_same_target(*target);
  targets_.push_back(std::move(target));
}

void OutputFiles::refuse_same_target(const Target& target) const {
  const auto is_stream = [](const Target& t) {
    return t.kind == Kind::standard_output || t.kind == Kind::standard_error;
  };
  for (const auto& other : targets_) {
    if (is_stream(target) && is_stream(*other)) continue;  // both may be one terminal: 2>&1
    const bool same_identity =
        target.identity && other->identity && *target.identity == *other->identity;
    const bool same_path = !target.final_path.empty() && target.final_path == other->final_path;
    if (same_identity || same_path) {
      target.fail(fmt::format("{} {} already writes to the same file", other->option, other->path));
    }
  }
}

const OutputFiles::Target& OutputFiles::find(std::string_view key) const {
  for (const auto& target : targets_) {
    if (target->key == key) return *target;
  }
  throw std::invalid_argument(fmt::format("output {} was never added", key));
}

bool OutputFiles::has(std::string_view key) const {
  for (const auto& target : targets_) {
    if (target->key == key) return true;
  }
  return false;
}

bool OutputFiles::takes_stdout() const {
  for (const auto& target : targets_) {
    if (target->kind == Kind::standard_output) return true;
  }
  return false;
}

bool OutputFiles::rewritable(std::string_view key) const {
  return has(key) && find(key).kind == Kind::regular_file;
}

const std::string& OutputFiles::path(std::string_view key) const {
  return find(key).path;
}

void OutputFiles::write(const std::vector<Content>& contents) const {
  struct Staged {
    const Target* target;
    Temporary temporary;
  };
  std::vector<Staged> staged;
  const auto abandon = [&staged] {
    for (const Staged& s : staged) ::unlink(s.temporary.path.c_str());
  };

  // 1. Every regular file's content into its temporary.
  for (const Content& content : contents) {
    const Target& target = find(content.key);
    if (target.kind != Kind::regular_file) continue;
    Temporary temporary = create_temporary(target.folder, target.base);
    if (temporary.fd < 0) {
      abandon();
      target.fail(fmt::format("cannot create a file in '{}' ({})", target.folder,
                              error_text(-temporary.fd)));
    }
    staged.push_back({&target, temporary});
    int error = write_all(temporary.fd, content.text);
    if (error == 0 && ::fsync(temporary.fd) != 0) error = errno;
    if (::close(temporary.fd) != 0 && error == 0) error = errno;
    if (error != 0) {
      abandon();
      target.fail(fmt::format("write failed ({})", error_text(error)));
    }
  }
  // 2. Devices, FIFOs and streams, which cannot be taken back.
  for (const Content& content : contents) {
    const Target& target = find(content.key);
    if (target.kind == Kind::in_place) {
      if (const int error = write_all(target.fd, content.text); error != 0) {
        abandon();
        target.fail(fmt::format("write failed ({})", error_text(error)));
      }
    } else if (target.kind != Kind::regular_file) {
      std::ostream& stream = target.kind == Kind::standard_output ? std::cout : std::cerr;
      stream.write(content.text.data(), static_cast<std::streamsize>(content.text.size()));
      stream.flush();
      if (!stream) {
        abandon();
        target.fail("write failed");
      }
    }
  }
  // 3. The renames.
  for (std::size_t i = 0; i < staged.size(); ++i) {
    if (::rename(staged[i].temporary.path.c_str(), staged[i].target->final_path.c_str()) != 0) {
      const int error = errno;
      for (std::size_t j = i; j < staged.size(); ++j) ::unlink(staged[j].temporary.path.c_str());
      staged[i].target->fail(fmt::format("cannot replace the file ({})", error_text(error)));
    }
  }
}

}  // namespace cfr::app
