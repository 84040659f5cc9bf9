#include "chromium.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "../app/cli_runner.hpp"

std::string chromium_path() {
  if (const char* chosen = std::getenv("CFR_CHROMIUM"); chosen != nullptr && *chosen != '\0') {
    return ::access(chosen, X_OK) == 0 ? chosen : "";
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::string candidate = dir + "/" + name;
      if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return "";
}

namespace {

// Single-quoted for /bin/sh; the test's own paths and flags.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

BrowserRun run_chromium(const std::string& url, const std::vector<std::string>& arguments) {
  const std::string profile = temp_path("chromium-profile");
  const std::string out_path = temp_path("chromium-stdout");
  const std::string err_path = temp_path("chromium-stderr");
  // Appended word by word, not summed: GCC 12 warns falsely (-Wrestrict) on " " + word.
  std::vector<std::string> words{"timeout",        "60",
                                 chromium_path(),  "--headless",
                                 "--disable-gpu",  "--no-sandbox",
                                 "--no-first-run", "--enable-logging=stderr",
                                 "--v=0",          "--user-data-dir=" + profile};
  words.insert(words.end(), arguments.begin(), arguments.end());
  words.push_back(url);
  std::string command;
  for (const std::string& word : words) command.append(quoted(word)).append(" ");
  command.append(">").append(quoted(out_path)).append(" 2>").append(quoted(err_path));
  command.append(" </dev/null");
  const int status = std::system(command.c_str());
  BrowserRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_file(out_path);
  run.err = read_file(err_path);
  std::error_code ignored;
  std::filesystem::remove_all(profile, ignored);
  std::filesystem::remove(out_path, ignored);
  std::filesystem::remove(err_path, ignored);
  return run;
}
