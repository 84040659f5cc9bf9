// Class 1 of issue 12: output targets. Every output is checked before any is
// written, regular files are replaced atomically, devices and FIFOs written in
// place, and one file or stream named twice is refused.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "adversarial.hpp"

using nlohmann::json;

namespace {

mode_t file_type(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info.st_mode & S_IFMT;
}

// A FIFO read to its end by a thread, as `cat fifo` would. The reader is
// open before the constructor returns (a non-blocking open does not wait
// for a writer), and gives up after 20 s if no writer ever comes.
class FifoReader {
 public:
  explicit FifoReader(std::string path) : path_(std::move(path)) {
    REQUIRE(::mkfifo(path_.c_str(), 0600) == 0);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(fd_ >= 0);
    thread_ = std::thread([this] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      char buffer[4096];
      bool got_data = false;
      while (std::chrono::steady_clock::now() < deadline) {
        const ssize_t n = ::read(fd_, buffer, sizeof buffer);
        if (n > 0) {
          text_.append(buffer, static_cast<std::size_t>(n));
          got_data = true;
        } else if (n == 0 && got_data) {
          break;  // the writer closed its end
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      }
      ::close(fd_);
    });
  }
  std::string finish() {
    thread_.join();
    return text_;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::string text_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("outputs: a character device is written in place, never replaced by a file",
          "[outputs]") {
  // Issue 12: `--json /dev/null` renamed a regular file over the device node.
  const CliResult r = run({"model", "--seq-lens", "1024", "--json", "/dev/null"});
  CHECK(r.exit_code == 0);
  CHECK(file_type("/dev/null") == S_IFCHR);
  const CliResult full = run({"model", "--seq-lens", "1024", "--json", "/dev/full"});
  check_refused(full, {"--json /dev/full", "write failed", "No space left on device"});
  CHECK(file_type("/dev/full") == S_IFCHR);
}

TEST_CASE("outputs: a FIFO is written in place when read, refused when nobody reads it",
          "[outputs]") {
  Scratch scratch;
  const std::string fifo = scratch.path("report.fifo");
  FifoReader reader(fifo);
  const CliResult r = run({"model", "--seq-lens", "1024", "--json", fifo});
  CHECK(r.exit_code == 0);
  CHECK(json::parse(reader.finish())["schema"] == "cuflash-roofline/report/v1");
  CHECK(file_type(fifo) == S_IFIFO);

  const std::string lonely = scratch.path("lonely.fifo");
  REQUIRE(::mkfifo(lonely.c_str(), 0600) == 0);
  check_refused(run({"gpus", "--json", lonely}), {"--json " + lonely, "nobody reads"});
}

TEST_CASE("outputs: every target is checked before any is written", "[outputs]") {
  // Issue 12: `--json X --md nodir/t.md` failed but left X behind.
  Scratch scratch;
  const std::string json_path = scratch.path("x.json");
  const std::string md_path = scratch.path("nodir/t.md");
  check_refused(run({"model", "--json", json_path, "--md", md_path}),
                {"--md " + md_path, "folder '" + scratch.path("nodir") + "' does not exist"});
  CHECK(scratch.entries().empty());

  // An existing file named with a bad sibling target keeps its content.
  const std::string kept = scratch.write("kept.json", "old");
  check_refused(run({"model", "--json", kept, "--csv", scratch.path("a/b/c.csv")}),
                {"--csv", "does not exist"});
  CHECK(read_file(kept) == "old");
  CHECK(scratch.entries() == std::vector<std::string>{"kept.json"});

  // The same for the evidence tools and import-historical.
  const std::string report = scratch.write_json("r.json", model_report_json());
  check_refused(run({"audit", report, "--json", scratch.path("none/a.json")}), {"--json"});
  check_refused(
      run({"plot", report, "--out", scratch.path("p.svg"), "--png", scratch.path("no/p.png")}),
      {"--png"});
  check_refused(run({"import-historical", source_path("configs/historical/v0.4.0.json"),
                     "--out-dir", scratch.path("missing/parent/dir")}),
                {"--out-dir"});
  check_refused(run({"report", report, "--html", scratch.path("no/p.html")}), {"--html"});
  check_refused(
      run({"model", "--json", scratch.path("m.json"), "--html", scratch.path("no/m.html")}),
      {"--html"});
  CHECK(scratch.entries() == std::vector<std::string>({"kept.json", "r.json"}));
}

TEST_CASE("outputs: two outputs on one stream or one file are refused", "[outputs]") {
  Scratch scratch;
  // Issue 12: `--json - --csv -` interleaved two formats on stdout.
  check_refused(run({"model", "--json", "-", "--csv", "-"}),
                {"--csv -", "--json already writes to stdout"});
  check_refused(run({"model", "--json", "stdout", "--md", "-"}), {"--md -", "stdout"});
  check_refused(run({"model", "--csv", "stderr", "--md", "stderr"}), {"--md stderr"});
  // Issue 12: `--json P --csv P` silently lost one; also under other spellings.
  const std::string p = scratch.path("p.out");
  check_refused(run({"model", "--json", p, "--csv", p}), {"--csv " + p, "same file"});
  check_refused(run({"model", "--json", p, "--md", scratch.dir + "/./p.out"}), {"same file"});
  REQUIRE(std::filesystem::create_directory(scratch.path("sub")));
  check_refused(run({"model", "--json", p, "--md", scratch.dir + "/sub/../p.out"}), {"same file"});
  CHECK(scratch.entries() == std::vector<std::string>{"sub"});
  // An existing file, and a link to it.
  scratch.write("e.json", "{}");
  std::filesystem::create_symlink(scratch.path("e.json"), scratch.path("link.json"));
  check_refused(
      run({"model", "--json", scratch.path("e.json"), "--csv", scratch.path("link.json")}),
      {"same file"});
  // A device named twice, and stdout named by path beside "-".
  check_refused(run({"model", "--json", "/dev/null", "--md", "/dev/null"}), {"same file"});
  CliLimits to_file;
  to_file.environment = {};
  // stdout and stderr may both be a terminal (2>&1): that is allowed.
  const CliResult both =
      run({"model", "--seq-lens", "1024", "--json", "stdout", "--csv", "stderr"});
  CHECK(both.exit_code == 0);
  CHECK(json::parse(both.out)["schema"] == "cuflash-roofline/report/v1");
  CHECK(both.err.find("kernel,dir,dtype") != std::string::npos);
}

TEST_CASE("outputs: folders, sockets, dangling links and missing folders are refused",
          "[outputs]") {
  Scratch scratch;
  check_refused(run({"model", "--json", scratch.dir}), {"--json " + scratch.dir, "is a folder"});
  check_refused(run({"gpus", "--json", scratch.path("new/")}), {"names a folder"});
  std::filesystem::create_symlink(scratch.path("nowhere"), scratch.path("dangling.json"));
  check_refused(run({"model", "--json", scratch.path("dangling.json")}),
                {"a symbolic link that leads nowhere"});

  const std::string socket_path = scratch.path("s.sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  check_refused(run({"model", "--json", socket_path}), {"a socket"});
  ::close(fd);
  // A folder where nothing can be created (proc's is read-only to everyone).
  check_refused(run({"model", "--csv", "/proc/self/table.csv"}),
                {"--csv /proc/self/table.csv", "cannot create a file"});
}

TEST_CASE("outputs: a file the command reads is never its output", "[outputs]") {
  Scratch scratch;
  const std::string report = scratch.write_json("r.json", model_report_json());
  const std::string before = read_file(report);
  check_refused(run({"audit", report, "--json", report}), {"--json " + report, "reads"});
  // Another name for the same file: a hard link.
  const std::string hard = scratch.path("hard.json");
  REQUIRE(::link(report.c_str(), hard.c_str()) == 0);
  check_refused(run({"audit", report, "--json", hard}), {"--json " + hard, "reads"});
  check_refused(run({"plot", report, "--out", report}), {"--out " + report, "reads"});
  check_refused(run({"compare", report, report, "--allow-unauditable", "--json", report}),
                {"reads"});
  const std::string table = scratch.write("t.json", read_file(source_path("configs/gpus.json")));
  check_refused(run({"model", "--gpu-table", table, "--json", table}), {"reads"});
  check_refused(run({"gpus", "--gpu-table", table, "--json", table}), {"reads"});
  const std::string historical =
      scratch.write("h.json", read_file(source_path("configs/historical/v0.4.0.json")));
  check_refused(run({"import-historical", historical, "--gpu", "h100", "--out", historical}),
                {"reads"});
  CHECK(read_file(report) == before);
}

TEST_CASE("outputs: a link to a file is written through, and stays a link", "[outputs]") {
  Scratch scratch;
  const std::string target = scratch.write("target.json", "old");
  const std::string link = scratch.path("link.json");
  std::filesystem::create_symlink(target, link);
  REQUIRE(run({"model", "--seq-lens", "1024", "--json", link}).exit_code == 0);
  CHECK(file_type(link) == S_IFLNK);
  CHECK(json::parse(read_file(target))["schema"] == "cuflash-roofline/report/v1");
  CHECK(scratch.entries() == std::vector<std::string>({"link.json", "target.json"}));
}

TEST_CASE("outputs: non-UTF-8 paths and arguments are written and recorded, never fatal",
          "[outputs]") {
  // Issue 12: a non-UTF-8 argument broke the JSON dump of provenance.command.
  Scratch scratch;
  const std::string odd = scratch.path("r\xff\xfe.json");
  const CliResult r = run({"model", "--seq-lens", "1024", "--json", odd, "--md", odd + ".md"});
  REQUIRE(r.exit_code == 0);
  const json report = json::parse(read_file(odd));
  const std::string command = report["provenance"]["command"];
  CHECK(command.find("r\\xFF\\xFE.json") != std::string::npos);
  CHECK(run({"audit", odd}).exit_code == 0);
  // The same byte in a ceiling's source (a --gpu-table path) and in an SVG title.
  const std::string table =
      scratch.write("t\xff.json", read_file(source_path("configs/gpus.json")));
  const CliResult from_table =
      run({"model", "--seq-lens", "1024", "--gpu-table", table, "--json", "-"});
  REQUIRE(from_table.exit_code == 0);
  CHECK_NOTHROW(json::parse(from_table.out));
  CHECK(run({"plot", odd, "--title", "\xc3\x28", "--out", scratch.path("t.svg")}).exit_code == 0);
  check_refused(run({"model", "--gpu", "\xff"}), {"--gpu \xff: unknown GPU"});
}

TEST_CASE("outputs: errors name the path the user gave, not a temporary", "[outputs]") {
  Scratch scratch;
  const CliResult r = run({"model", "--json", "/proc/version"});
  check_refused(r, {"--json /proc/version"});
  CHECK(r.err.find(".tmp") == std::string::npos);
  CHECK(scratch.entries().empty());
}

TEST_CASE("outputs: commands that fail for want of a device write nothing", "[outputs]") {
  Scratch scratch;
  check_refused(run({"ceilings", "--json", scratch.path("c.json")}), {"CUDA device"}, 3);
  // The output is checked first: a bad target is a usage error even there.
  check_refused(run({"ceilings", "--json", scratch.path("x/c.json")}), {"--json"});
  CHECK(scratch.entries().empty());
}

TEST_CASE("outputs: --png without rsvg-convert writes neither the PNG nor the SVG", "[outputs]") {
  Scratch scratch;
  const std::string report = scratch.write_json("r.json", model_report_json());
  CliLimits no_tools;
  no_tools.environment = {"PATH=/nonexistent"};
  check_refused(
      run({"plot", report, "--out", scratch.path("p.svg"), "--png", scratch.path("p.png")},
          no_tools),
      {"--png", "rsvg-convert is not installed", "nothing was written"});
  CHECK(scratch.entries() == std::vector<std::string>{"r.json"});
}

TEST_CASE("outputs: --out-dir is made when missing and removed again when nothing is written",
          "[outputs]") {
  Scratch scratch;
  const std::string historical = source_path("configs/historical/v0.4.0.json");
  const std::string dir = scratch.path("made");
  CHECK(run({"import-historical", historical, "--out-dir", dir}).exit_code == 0);
  CHECK(std::filesystem::is_regular_file(dir + "/v0.4.0-h100.json"));
  // A GPU the table lacks: refused before the folder is made.
  check_refused(
      run({"import-historical", historical, "--out-dir", scratch.path("other"), "--gpu", "h200"}),
      {"h200"});
  // A file where the folder should be.
  const std::string file = scratch.write("file", "x");
  check_refused(run({"import-historical", historical, "--out-dir", file}), {"--out-dir " + file});
  CHECK(scratch.entries() == std::vector<std::string>({"file", "made"}));
}

TEST_CASE("outputs: a --plugin file is never an output", "[outputs]") {
  // `model --plugin p.so --json p.so` replaced the library with the report and exited 0.
  Scratch scratch;
  const std::string plugin = scratch.write("p.so", read_file(CFR_EXAMPLE_PLUGIN));
  const std::string before = read_file(plugin);
  for (const char* option : {"--json", "--csv", "--md"}) {
    check_refused(run({"model", "--plugin", plugin, "--seq-lens", "1024", option, plugin}),
                  {std::string(option) + " " + plugin, "reads"});
    check_refused(run({"sweep", "--plugin", plugin, "--seq-lens", "1024", option, plugin}),
                  {"reads"});
  }
  const std::string link = scratch.path("link.so");
  std::filesystem::create_symlink(plugin, link);
  check_refused(run({"model", "--plugin", plugin, "--json", link}), {"reads"});
  const std::string report = scratch.write_json("r.json", model_report_json());
  check_refused(run({"audit", "--plugin", plugin, report, "--json", plugin}), {"reads"});
  CHECK(read_file(plugin) == before);
}

TEST_CASE("outputs: standard output named by path is standard output", "[outputs]") {
  // `--json /dev/stdout` put the table on stdout after the JSON, which then did not parse.
  for (const char* alias : {"/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"}) {
    INFO(alias);
    const CliResult r = run({"model", "--seq-lens", "1024", "--json", alias});
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["schema"] == "cuflash-roofline/report/v1");
    CHECK(r.err.find("kernel") != std::string::npos);  // the table went to stderr
    check_refused(run({"model", "--json", alias, "--csv", "-"}),
                  {"--csv -", "already writes to stdout"});
  }
  const CliResult audit =
      run({"audit", source_path("results/h200/ceilings.json"), "--json", "/dev/stdout"});
  CHECK(json::parse(audit.out).is_object());
}
