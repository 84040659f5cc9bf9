#pragma once

// Where a command's outputs go (--json, --csv, --md, --out, --png, ...).
// Every target is checked when the command starts, before any work, so a bad
// one fails before anything is written; then all are written together:
//   - a regular file (new or existing) through a temporary file in its own
//     folder and a rename, every temporary written before the first rename,
//     so a failure leaves every target as it was;
//   - a character device or a FIFO (/dev/null, /dev/tty, a named pipe) in
//     place: a rename over it would replace the device node with a file;
//   - "-" or "stdout" to standard output, "stderr" to standard error (the
//     names nvbench takes).
// Refused, with one line naming the option and the path: an empty path, a
// folder, a missing or unwritable folder, a block device or socket, a FIFO
// nobody reads, one file or stream named by two options, and a file the
// command reads.

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cfr::app {

class OutputFiles {
 public:
  OutputFiles();
  ~OutputFiles();
  OutputFiles(OutputFiles&&) noexcept;
  OutputFiles& operator=(OutputFiles&&) noexcept;

  // Files the command reads: an output naming one of them is refused (the
  // report would overwrite its own input). Call before add().
  void protect_input(const std::string& path);

  // Checks PATH as the target of OPTION (e.g. "--json"), which is also the
  // key its content is given under; an empty PATH means the option was not
  // given and is ignored. Throws std::runtime_error.
  void add(std::string_view option, const std::string& path);
  // The same for one of several files of one option (import-historical
  // --out-dir): KEY names this target alone.
  void add(std::string_view key, std::string_view option, const std::string& path);

  bool has(std::string_view key) const;
  // True when some target is standard output, so the human-readable text
  // goes to stderr instead.
  bool takes_stdout() const;
  // True for a regular file: one that can be rewritten as work progresses (a
  // sweep's partial report) without a reader seeing several documents.
  bool rewritable(std::string_view key) const;
  // The path as the user gave it, for messages ("wrote PATH").
  const std::string& path(std::string_view key) const;

  struct Content {
    std::string_view key;
    std::string text;
  };
  // Writes each content to its key's target, all or nothing for regular
  // files. Throws std::runtime_error naming the option and the path the user gave.
  void write(const std::vector<Content>& contents) const;

 private:
  struct Target;
  void refuse_same_target(const Target& target) const;
  const Target& find(std::string_view key) const;
  std::vector<std::unique_ptr<Target>> targets_;
  std::vector<std::pair<unsigned long, unsigned long>> inputs_;  // device and inode
};

}  // namespace cfr::app
