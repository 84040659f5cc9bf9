#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

// roofline/'s parts, lowest first: a file may include its own part and the
// parts before it, never one after it, so there is no cycle between the parts
// (issue 21). The order is this list; the folders are what the tree holds.
namespace {

const std::array<std::string, 6> parts{"core", "model", "report", "profile", "evidence", "html"};

int rank_of(const std::string& part) {
  const auto found = std::find(parts.begin(), parts.end(), part);
  return found == parts.end() ? -1 : static_cast<int>(found - parts.begin());
}

struct Include {
  std::string file;
  std::string target;
};

std::vector<Include> project_includes(const std::filesystem::path& root) {
  static const std::regex include_line(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<Include> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "roofline")) {
    const std::string extension = entry.path().extension().string();
    if (extension != ".hpp" && extension != ".cpp") continue;
    std::ifstream file(entry.path());
    std::string line;
    std::smatch match;
    while (std::getline(file, line)) {
      if (std::regex_search(line, match, include_line)) {
        found.push_back({std::filesystem::relative(entry.path(), root).string(), match[1]});
      }
    }
  }
  return found;
}

// "roofline/model/x.hpp" -> "model"; "" where the path is not under roofline/.
std::string part_of(const std::string& path) {
  const std::string prefix = "roofline/";
  if (path.rfind(prefix, 0) != 0) return "";
  const auto slash = path.find('/', prefix.size());
  return slash == std::string::npos ? "" : path.substr(prefix.size(), slash - prefix.size());
}

}  // namespace

TEST_CASE("every roofline/ source lies in a named part", "[layering]") {
  const std::filesystem::path root = CFR_SOURCE_ROOT;
  for (const auto& entry : std::filesystem::directory_iterator(root / "roofline")) {
    const std::string extension = entry.path().extension().string();
    INFO(entry.path().string());
    CHECK((extension != ".hpp" && extension != ".cpp"));
    if (entry.is_directory()) CHECK(rank_of(entry.path().filename().string()) >= 0);
  }
}

TEST_CASE("roofline/ parts include only themselves and lower parts, and no CUDA", "[layering]") {
  const std::vector<Include> includes = project_includes(CFR_SOURCE_ROOT);
  REQUIRE(includes.size() > 100);  // the scan found the sources
  for (const Include& include : includes) {
    INFO(include.file << " includes " << include.target);
    const bool relative = include.target.find('/') == std::string::npos;
    if (relative) continue;  // a file beside it: the same part
    CHECK(include.target.rfind("kernels/", 0) != 0);
    CHECK(include.target.rfind("app/", 0) != 0);
    const std::string target_part = part_of(include.target);
    if (target_part.empty()) continue;  // a generated header (git_info.hpp) or a library
    CHECK(rank_of(target_part) >= 0);
    CHECK(rank_of(target_part) <= rank_of(part_of(include.file)));
  }
}
