// The HTML page in a real browser (issue 24): Debian's Chromium, headless,
// opens the page `report --html` makes of the committed H200 sweeps and
// ceilings.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "chromium.hpp"
#include "png_pixels.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

const std::vector<std::string> committed{"results/h200/sweep-causal.json",
                                         "results/h200/sweep-noncausal.json"};

// The page, made once by the binary from the committed reports under the
// committed measured ceilings, as results/update-readme.sh makes it.
const std::string& page_path() {
  static const std::string path = [] {
    const std::string out = temp_path("browser.html");
    std::vector<std::string> words{"report"};
    for (const std::string& file : committed) words.push_back(source_path(file));
    words.push_back(source_path("results/h200/ceilings.json"));
    words.insert(words.end(), {"--html", out});
    const CliResult made = run_cli(words);
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
    return out;
  }();
  return path;
}

std::string url(const std::string& path, const std::string& fragment = "") {
  return "file://" + path + fragment;
}

// The DOM after the page's script and its self-test ran, loaded once.
const BrowserRun& selftest_run() {
  static const BrowserRun run = run_chromium(url(page_path(), "#selftest"), {"--dump-dom"});
  return run;
}

std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = std::min(log.find('\n', start), log.size());
    const std::string line = log.substr(start, end - start);
    if (line.find(":CONSOLE") != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::size_t end = 0;  // just past its '>'

  bool has_class(const std::string& name) const {
    const auto found = attributes.find("class");
    if (found == attributes.end()) return false;
    const std::string padded = " " + found->second + " ";
    return padded.find(" " + name + " ") != std::string::npos;
  }
  std::string get(const std::string& key) const {
    const auto found = attributes.find(key);
    return found == attributes.end() ? std::string("<absent>") : found->second;
  }
};

std::string decoded(std::string text) {
  for (const auto& [entity, character] :
       {std::pair{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (std::size_t at = 0; (at = text.find(entity, at)) != std::string::npos; ++at) {
      text.replace(at, std::string_view(entity).size(), character);
    }
  }
  return text;
}

// The start tags of Chromium's serialized DOM (HTML: attribute values in
// double quotes), the script's text skipped.
std::vector<Tag> start_tags(const std::string& dom) {
  std::vector<Tag> tags;
  for (std::size_t at = dom.find('<'); at != std::string::npos; at = dom.find('<', at + 1)) {
    if (at + 1 >= dom.size() || !std::isalpha(static_cast<unsigned char>(dom[at + 1]))) continue;
    Tag tag;
    std::size_t i = at + 1;
    while (i < dom.size() && (std::isalnum(static_cast<unsigned char>(dom[i])) || dom[i] == '-')) {
      tag.name += dom[i++];
    }
    while (i < dom.size() && dom[i] != '>') {
      if (std::isspace(static_cast<unsigned char>(dom[i])) || dom[i] == '/') {
        ++i;
        continue;
      }
      std::string key;
      while (i < dom.size() && dom[i] != '=' && dom[i] != '>' &&
             !std::isspace(static_cast<unsigned char>(dom[i]))) {
        key += dom[i++];
      }
      std::string value;
      if (i < dom.size() && dom[i] == '=' && i + 1 < dom.size() && dom[i + 1] == '"') {
        const std::size_t close = dom.find('"', i + 2);
        value = decoded(dom.substr(i + 2, close - i - 2));
        i = close + 1;
      }
      tag.attributes[key] = value;
    }
    tag.end = i + 1;
    tags.push_back(tag);
    if (tag.name == "script") at = dom.find("</script>", at);
  }
  return tags;
}

const Tag* by_id(const std::vector<Tag>& tags, const std::string& id) {
  for (const Tag& tag : tags) {
    if (tag.get("id") == id) return &tag;
  }
  return nullptr;
}

std::vector<Report> committed_reports() {
  std::vector<Report> reports;
  for (const std::string& file : committed) {
    reports.push_back(
        report_from_json(nlohmann::json::parse(cfr::test::read_source_text(source_path(file)))));
  }
  return reports;
}

bool drawn(const ResultRow& row) {
  return row.status == RowStatus::ok && row.achieved && row.achieved->TFLOPs > 0;
}

}  // namespace

// The self-test (page_assets.hpp) also checks that no chart label's box
// overlaps another's as Chromium draws them, with its fonts.
TEST_CASE("the page loads with no console message and no load, its script and self-test pass") {
  const BrowserRun& run = selftest_run();
  REQUIRE(run.exit_code == 0);
  // The policy refuses any load and Chromium logs the refusal on the console,
  // as it logs any script error: a clean load prints no console line at all.
  const std::vector<std::string> console = console_lines(run.err);
  for (const std::string& line : console) UNSCOPED_INFO(line);
  CHECK(console.empty());
  const std::vector<Tag> tags = start_tags(run.out);
  const Tag* status = by_id(tags, "script-status");
  REQUIRE(status != nullptr);
  CHECK(status->get("data-state") == "ok");
  const Tag* selftest = by_id(tags, "selftest");
  REQUIRE(selftest != nullptr);
  INFO(run.out.substr(selftest->end, 400));
  CHECK(selftest->get("data-state") == "passed");
  std::size_t expected = 0;
  for (const Report& report : committed_reports()) {
    expected += static_cast<std::size_t>(
        std::count_if(report.results.begin(), report.results.end(), drawn));
  }
  CHECK(selftest->get("data-points") == std::to_string(expected));
}

TEST_CASE("the DOM holds one focusable point per ok row, with its figures, linked to its row") {
  const std::string& dom = selftest_run().out;
  const std::vector<Tag> tags = start_tags(dom);
  const std::vector<Report> reports = committed_reports();
  const Figure& ai = figure("model/ai");
  const Figure& tflops = figure("achieved/TFLOPs");
  std::size_t points = 0;
  for (const Tag& point : tags) {
    if (!point.has_class("point")) continue;
    ++points;
    const std::string id = point.get("data-row");
    INFO(id);
    const std::size_t dash = id.find('-');
    REQUIRE(dash != std::string::npos);
    const std::size_t r = std::stoul(id.substr(0, dash));
    const std::size_t i = std::stoul(id.substr(dash + 1));
    REQUIRE(r < reports.size());
    REQUIRE(i < reports[r].results.size());
    const ResultRow& row = reports[r].results[i];
    CHECK(drawn(row));
    CHECK(point.get("tabindex") == "0");
    CHECK(point.get("role") == "button");
    CHECK(point.get("aria-label").find(row.kernel) == 0);
    CHECK(point.get("id") == "point-" + id);
    CHECK(point.get("aria-controls") == "row-" + id);
    CHECK(std::stod(point.get("data-ai")) == Approx(*figure_number(ai, row)).epsilon(1e-9));
    CHECK(std::stod(point.get("data-tflops")) == Approx(*figure_number(tflops, row)).epsilon(1e-9));
    // Its table row, pointing back, holds the row's figures as `table` prints them.
    const Tag* table_row = by_id(tags, "row-" + id);
    REQUIRE(table_row != nullptr);
    CHECK(table_row->get("data-point") == "point-" + id);
    const std::string cells =
        dom.substr(table_row->end, dom.find("</tr>", table_row->end) - table_row->end);
    for (const Figure* f : {&ai, &tflops}) {
      CHECK(cells.find("<td>" + format_figure(*f, figure_value(*f, row)) + "</td>") !=
            std::string::npos);
    }
    CHECK(cells.find("<td>" + row.kernel + "</td>") == 0);
  }
  std::size_t expected = 0;
  for (const Report& report : reports) {
    expected += static_cast<std::size_t>(
        std::count_if(report.results.begin(), report.results.end(), drawn));
  }
  CHECK(points == expected);
}

TEST_CASE("a load the page would make is refused and shows on the console") {
  // The check above can fail: the same page with one image from the network.
  std::string page = read_file(page_path());
  const std::size_t body = page.find("<body>");
  REQUIRE(body != std::string::npos);
  page.insert(body + 6, "<img src=\"http://127.0.0.1:9/probe.png\" alt=\"\"/>");
  const std::string probe = temp_path("probe.html");
  std::ofstream(probe) << page;
  const BrowserRun run = run_chromium(url(probe), {"--dump-dom"});
  const std::vector<std::string> console = console_lines(run.err);
  REQUIRE(console.size() == 1);
  CHECK(console[0].find("probe.png") != std::string::npos);
  CHECK(console[0].find("Content Security Policy") != std::string::npos);
  std::filesystem::remove(probe);
}

TEST_CASE("a screenshot of the page shows the chart drawn") {
  const std::string shot = temp_path("screenshot.png");
  const BrowserRun run = run_chromium(
      url(page_path()), {"--hide-scrollbars", "--window-size=1280,1400", "--screenshot=" + shot});
  REQUIRE(run.exit_code == 0);
  const Pixels pixels = decode_png(read_file(shot));
  REQUIRE(pixels.width == 1280);
  REQUIRE(pixels.height == 1400);
  // Not blank: much of the page is not its background, and the markers of
  // the sweep's first two kernels are there in their colours (roofline_svg).
  const std::uint32_t background = pixels.at(pixels.width - 1, pixels.height - 1);
  std::size_t inked = 0;
  std::map<std::uint32_t, std::size_t> kernel_colours{{0x1f77b4, 0}, {0xd62728, 0}};
  for (const std::uint32_t rgb : pixels.rgb) {
    inked += rgb != background;
    if (const auto found = kernel_colours.find(rgb); found != kernel_colours.end()) {
      ++found->second;
    }
  }
  CHECK(inked > pixels.rgb.size() / 20);
  for (const auto& [colour, count] : kernel_colours) {
    INFO(std::hex << colour);
    CHECK(count > 200);
  }
  std::filesystem::remove(shot);
}
