#include "tool_info.hpp"

#include <unistd.h>

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "build_info.hpp"
#include "git_info.hpp"
#include "roofline/core/utf8_text.hpp"

namespace cfr::app {

namespace {
std::string& stored_command_line() {
  static std::string line;
  return line;
}
}  // namespace

ToolInfo current_tool_info() {
  ToolInfo info;
  info.version = CFR_VERSION;
  info.build_type = CFR_BUILD_TYPE;
  info.cuda_archs = CFR_CUDA_ARCHS;
  std::string describe = CFR_GIT_DESCRIBE;
  constexpr std::string_view dirty_suffix = "-dirty";
  info.git_dirty = describe.size() > dirty_suffix.size() && describe.ends_with(dirty_suffix);
  if (info.git_dirty) describe.resize(describe.size() - dirty_suffix.size());
  info.git_commit = describe;
  if (describe == "unknown") info.git_dirty = true;
  return info;
}

std::string generator_name() {
  // The commit as git describes it: "-dirty" where the tree was.
  return fmt::format("{} {} ({})", ToolInfo{}.name, CFR_VERSION, CFR_GIT_DESCRIBE);
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

void set_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += argv[i];
  }
  // A path or argument need not be UTF-8; a JSON string must be.
  stored_command_line() = escape_invalid_utf8(line);
}

const std::string& command_line() {
  return stored_command_line();
}

}  // namespace cfr::app
