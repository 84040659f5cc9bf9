#include "cli_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/source_text.hpp"

bool file_exists(const std::string& path);

// As read_source_text (gzip inflated, FILE read from FILE.gz), but a file
// that is not there reads as empty: the tests check outputs that may be missing.
std::string read_file(const std::string& path) {
  if (!file_exists(path) && !file_exists(path + ".gz")) return {};
  return cfr::test::read_source_text(path);
}

bool file_exists(const std::string& path) {
  return std::ifstream(path).good();
}

std::string temp_path(const std::string& name) {
  return "/tmp/cfr-cli-test-" + std::to_string(::getpid()) + "-" + name;
}

std::string source_path(const std::string& relative) {
  return std::string(CFR_SOURCE_ROOT) + "/" + relative;
}

std::vector<std::string> split_words(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

CliResult run_cli(const std::string& arguments) {
  const std::string out_path = temp_path("stdout");
  const std::string err_path = temp_path("stderr");
  const std::string command = std::string("CUDA_VISIBLE_DEVICES= '") + CFR_BINARY + "' " +
                              arguments + " >'" + out_path + "' 2>'" + err_path + "'";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

namespace {

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const std::vector<std::string>& arguments, const CliLimits& limits,
                             const std::string& out_path, const std::string& err_path) {
  const int in = ::open(limits.stdin_path.c_str(), O_RDONLY);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (in < 0 || out < 0 || err < 0) ::_exit(126);
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (!limits.working_directory.empty() && ::chdir(limits.working_directory.c_str()) != 0) {
    ::_exit(126);
  }
  const rlimit memory{limits.address_space_bytes, limits.address_space_bytes};
  ::setrlimit(RLIMIT_AS, &memory);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(CFR_BINARY));
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  ::execv(CFR_BINARY, argv.data());
  ::_exit(127);
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& arguments, const CliLimits& limits) {
  const std::string out_path = temp_path("argv-stdout");
  const std::string err_path = temp_path("argv-stderr");
  // The environment is set up in the parent: setenv is not safe after fork.
  std::vector<std::pair<std::string, std::string>> saved;
  auto set = [&saved](const std::string& name, const std::string& value) {
    const char* old = std::getenv(name.c_str());
    saved.emplace_back(name, old ? old : std::string("\x01unset"));
    ::setenv(name.c_str(), value.c_str(), 1);
  };
  set("CUDA_VISIBLE_DEVICES", "");
  for (const std::string& entry : limits.environment) {
    const auto equals = entry.find('=');
    set(entry.substr(0, equals), entry.substr(equals + 1));
  }
  const pid_t child = ::fork();
  if (child == 0) exec_child(arguments, limits, out_path, err_path);
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->second == "\x01unset") {
      ::unsetenv(it->first.c_str());
    } else {
      ::setenv(it->first.c_str(), it->second.c_str(), 1);
    }
  }

  CliResult result;
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  int status = 0;
  rusage usage{};
  while (::wait4(child, &status, WNOHANG, &usage) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::wait4(child, &status, 0, &usage);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  result.max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return result;
}
