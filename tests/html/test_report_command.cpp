#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "page_reading.hpp"

namespace {

std::string html_path(const std::string& name) {
  return temp_path(name);
}

}  // namespace

// The command as the README shows it, on the committed H200 reports.
TEST_CASE("report --html writes one page of the committed sweeps, both charted and tabled") {
  const std::string out = html_path("sweeps.html");
  const CliResult r = run_cli(
      std::vector<std::string>{"report", source_path("results/h200/sweep-causal.json"),
                               source_path("results/h200/sweep-noncausal.json"), "--html", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote " + out + ": 2 reports") == 0);
  const std::string page = read_file(out);
  CHECK(page.starts_with("<!DOCTYPE html>\n"));
  const XmlElement parsed = parse_page(page);
  CHECK(find_all(parsed, [](const XmlElement& e) { return e.has_class("report"); }).size() == 2);
  // The generator is this binary: its version and commit.
  CHECK(page.find("<meta name=\"generator\" content=\"cuflash-roofline 0.1.0 (") !=
        std::string::npos);
  std::filesystem::remove(out);
}

TEST_CASE("report draws a ceilings report among its files as measured roofs, as plot does") {
  const std::string out = html_path("ceilings.html");
  const std::string ceilings = source_path("results/h200/ceilings.json");
  const CliResult r = run_cli(std::vector<std::string>{
      "report", source_path("results/h200/sweep-causal.json"), ceilings, "--html", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(ceilings + ": a ceilings report, drawn as measured roofs\n") == 0);
  const XmlElement page = parse_page(read_file(out));
  const auto measured = find_all(page, [](const XmlElement& e) {
    return e.has_class("roof") && e.attribute("data-source") == "measured";
  });
  CHECK_FALSE(measured.empty());
  const auto named =
      find_all(page, [](const XmlElement& e) { return e.has_class("measured-ceiling"); });
  REQUIRE(named.size() == 1);
  CHECK(named[0]->text.find(ceilings) != std::string::npos);
  // The file names the device ("NVIDIA H200"), the report's ceiling the GPU table's entry of
  // that device ("NVIDIA H200 SXM 141GB"): one GPU, named once in the title.
  const nlohmann::json sweep =
      nlohmann::json::parse(read_file(source_path("results/h200/sweep-causal.json")));
  REQUIRE(sweep["ceiling"]["matches_device"] == true);
  const std::string table_name = sweep["ceiling"]["gpu_name"];
  const auto title = find_all(page, [](const XmlElement& e) { return e.has_class("title"); });
  REQUIRE(title.size() == 1);
  CHECK(title[0]->text == "Roofline: " + table_name);
  // A report whose ceiling is not the device's keeps the two apart.
  nlohmann::json other = sweep;
  other["ceiling"]["matches_device"] = false;
  const std::string other_path = temp_path("other-ceiling.json");
  std::ofstream(other_path) << other.dump();
  REQUIRE(
      run_cli(std::vector<std::string>{"report", other_path, ceilings, "--html", out}).exit_code ==
      0);
  const XmlElement apart = parse_page(read_file(out));
  const auto titles = find_all(apart, [](const XmlElement& e) { return e.has_class("title"); });
  REQUIRE(titles.size() == 1);
  CHECK(titles[0]->text == "Roofline: " + table_name + ", NVIDIA H200");
  std::filesystem::remove(other_path);
  // Alone, there is nothing to show.
  const CliResult alone = run_cli(std::vector<std::string>{"report", ceilings, "--html", out});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("ceilings.json: a ceilings report; report needs at least one") !=
        std::string::npos);
  CHECK(std::count(alone.err.begin(), alone.err.end(), '\n') == 1);
  std::filesystem::remove(out);
}

TEST_CASE("report refuses an unusable file, leaving the target as it was") {
  const std::string out = html_path("kept.html");
  std::ofstream(out) << "before";
  const std::string broken = temp_path("broken.json");
  std::ofstream(broken) << "{\"schema\": ";
  const CliResult unusable = run_cli(std::vector<std::string>{"report", broken, "--html", out});
  CHECK(unusable.exit_code == 2);
  CHECK(unusable.err.find("broken.json") != std::string::npos);
  CHECK(read_file(out) == "before");
  const CliResult over_input =
      run_cli(std::vector<std::string>{"report", broken, "--html", broken});
  CHECK(over_input.exit_code == 2);
  CHECK(over_input.err.find("--html " + broken) != std::string::npos);
  const CliResult no_output =
      run_cli(std::vector<std::string>{"report", source_path("results/h200/sweep-causal.json")});
  CHECK(no_output.exit_code == 2);
  CHECK(no_output.err.find("--html") != std::string::npos);
  std::filesystem::remove(out);
  std::filesystem::remove(broken);
}

TEST_CASE("report --by shape sets ours against torch's backends on the committed peer run") {
  const std::string out = html_path("peers.html");
  const CliResult r = run_cli(std::vector<std::string>{
      "report", source_path("results/h200/peers/torch-sdpa.json"),
      source_path("results/h200/peers/sweep-peer-axes.json"), "--by", "shape", "--html", out});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const XmlElement page = parse_page(read_file(out));
  const auto means =
      find_all(page, [](const XmlElement& e) { return e.has_class("pairing-mean"); });
  CHECK_FALSE(means.empty());
  CHECK(std::any_of(means.begin(), means.end(), [](const XmlElement* e) {
    return e->text.find("fa2_mma over torch_sdpa_flash: geomean") == 0;
  }));
  const CliResult wrong = run_cli(std::vector<std::string>{
      "report", source_path("results/h200/sweep-causal.json"), "--by", "size", "--html", out});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("--by") != std::string::npos);
  std::filesystem::remove(out);
}

TEST_CASE("model and sweep write the page with --html, beside the JSON it names") {
  const std::string json = temp_path("model.json");
  const std::string page = html_path("model.html");
  const CliResult model =
      run_cli(std::vector<std::string>{"model", "--gpu", "h200", "--kernels", "fa1_wmma",
                                       "--seq-lens", "1024,4096", "--json", json, "--html", page});
  INFO(model.err);
  REQUIRE(model.exit_code == 0);
  const XmlElement parsed = parse_page(read_file(page));
  // A model report's rows are projections: drawn gray at their roof, each linked to its row.
  const auto projections =
      find_all(parsed, [](const XmlElement& e) { return e.has_class("model-point"); });
  CHECK(projections.size() == 2);
  const auto sections = find_all(parsed, [](const XmlElement& e) { return e.has_class("report"); });
  REQUIRE(sections.size() == 1);
  CHECK(all_text(sections[0]->children.front()) == json);
  // No GPU here: the sweep is the model of its rows, and says so on the page as in its JSON.
  const CliResult sweep = run_cli(std::vector<std::string>{
      "sweep", "--gpu", "h200", "--kernels", "fa1_wmma", "--seq-lens", "1024", "--html", page});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  const std::string swept = read_file(page);
  CHECK(swept.find("<h2>this run</h2>") != std::string::npos);
  CHECK(find_all(parse_page(swept), [](const XmlElement& e) {
          return e.has_class("model-point");
        }).size() == 1);
  std::filesystem::remove(json);
  std::filesystem::remove(page);
}
