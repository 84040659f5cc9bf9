#include <fmt/format.h>

#include "commands.hpp"
#include "tool_info.hpp"

namespace cfr::app {

void add_version_flag(CLI::App& command) {
  const ToolInfo tool = current_tool_info();
  command.set_version_flag("--version", fmt::format("{} ({}{})", tool.version, tool.git_commit,
                                                    tool.git_dirty ? "-dirty" : ""));
}

}  // namespace cfr::app
