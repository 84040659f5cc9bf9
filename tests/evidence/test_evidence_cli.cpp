#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../app/cli_runner.hpp"
#include "roofline/report/figures.hpp"
#include "roofline/report/report_json.hpp"
#include "sample_reports.hpp"
#include "xml_check.hpp"

using namespace cfr;
using nlohmann::json;

namespace {

// Removes every temporary file and folder of this process when the tests end.
struct TemporaryFiles {
  ~TemporaryFiles() {
    const std::string prefix = std::filesystem::path(temp_path("")).filename().string();
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/tmp", error)) {
      if (entry.path().filename().string().starts_with(prefix)) {
        std::filesystem::remove_all(entry.path(), error);
      }
    }
  }
} temporary_files;

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string write_report(const std::string& name, const Report& report) {
  return write_temp(name, to_json(report).dump(2));
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The four ways a file can be unusable, each with what the one-line error must name.
struct BadFile {
  std::string path;
  std::string expected;  // besides the path
};

std::vector<BadFile> bad_report_files() {
  const std::string good = to_json(measured_report()).dump(2);
  json wrong = to_json(measured_report());
  wrong["results"][0]["timing"]["median_ms"] = "fast";
  return {
      {temp_path("missing.json"), "cannot open"},
      {write_temp("truncated.json", good.substr(0, good.size() / 2)), "not valid JSON"},
      {write_temp("text.json", "this is not a report\n"), "not valid JSON"},
      {write_temp("wrong.json", wrong.dump()), "results[0].timing.median_ms: expected a number"},
  };
}

void check_one_line_error(const CliResult& result, const BadFile& bad) {
  INFO("stderr: " << result.err);
  CHECK(result.exit_code == 2);  // main(): a thrown one-line error, never a signal
  CHECK(lines(result.err) == 1);
  CHECK(result.err.find(bad.path) != std::string::npos);
  CHECK(result.err.find(bad.expected) != std::string::npos);
}

CliResult run_with_path(const std::string& path_variable, const std::string& arguments) {
  const std::string out = temp_path("env-out");
  const std::string err = temp_path("env-err");
  const std::string command = "PATH='" + path_variable + "' CUDA_VISIBLE_DEVICES= '" + CFR_BINARY +
                              "' " + arguments + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(out), read_file(err)};
}

}  // namespace

TEST_CASE("each evidence command answers --help and --version") {
  for (const char* command : {"audit", "compare", "plot", "import-historical"}) {
    INFO(command);
    const CliResult help = run_cli(std::string(command) + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.out.find("Usage") != std::string::npos);
    const CliResult version = run_cli(std::string(command) + " --version");
    CHECK(version.exit_code == 0);
    CHECK(version.out.starts_with("0.1.0 ("));  // meson.build: project version 0.1.0
  }
}

TEST_CASE(
    "missing, truncated, non-JSON and wrong-schema reports fail in one line naming the file "
    "and key") {
  const std::string good = write_report("good.json", measured_report());
  const std::vector<BadFile> bad = bad_report_files();
  for (const BadFile& file : bad) {
    check_one_line_error(run_cli("audit '" + file.path + "'"), file);
    check_one_line_error(run_cli("compare '" + file.path + "' '" + good + "'"), file);
    check_one_line_error(run_cli("plot '" + file.path + "' --out '" + temp_path("bad.svg") + "'"),
                         file);
  }
  // The other positions get one kind each (the schema error, the one that needs the key path):
  // the reader is the same, only its caller differs.
  check_one_line_error(run_cli("compare '" + good + "' '" + bad[3].path + "'"), bad[3]);
  check_one_line_error(run_cli("compare --roofline '" + bad[3].path + "'"), bad[3]);
}

TEST_CASE("a bad historical table fails in one line naming the file and key") {
  std::ifstream in(source_path("configs/historical/v0.4.0.json"));
  json table = json::parse(in);
  table["rows"][2].erase("time_ms");
  const std::vector<BadFile> bad{
      {temp_path("missing-table.json"), "cannot open"},
      {write_temp("truncated-table.json", table.dump().substr(0, 300)), "not valid JSON"},
      {write_temp("text-table.json", "v0.4.0\n"), "not valid JSON"},
      {write_temp("wrong-table.json", table.dump()), "rows[2].time_ms: missing"},
  };
  for (const BadFile& file : bad) {
    check_one_line_error(
        run_cli("import-historical '" + file.path + "' --out-dir '" + temp_path("hist") + "'"),
        file);
  }
}

TEST_CASE("audit exits 0 on a consistent report and 1 on a tampered one") {
  const CliResult clean = run_cli("audit '" + write_report("clean.json", measured_report()) + "'");
  CHECK(clean.exit_code == 0);
  CHECK(clean.out.find(": consistent: 9 rows") != std::string::npos);

  Report tampered = measured_report();
  tampered.results[2].timing->summary.median *= 0.9;
  const std::string path = write_report("tampered.json", tampered);
  const std::string json_path = temp_path("audit.json");
  const CliResult result = run_cli("audit '" + path + "' --json '" + json_path + "'");
  CHECK(result.exit_code == 1);
  CHECK(result.out.find("results[2] (fa1_scalar forward fp16 B=1 H=8 N=4096 d=64): "
                        "timing.median_ms: report") != std::string::npos);
  const json document = json::parse(read_file(json_path));
  CHECK(document["schema"] == "cuflash-roofline/audit/v1");
  CHECK(document["consistent"] == false);
}

TEST_CASE("compare: SAME on itself, the regression gate, and the refusal rules") {
  const std::string base = write_report("base.json", measured_report());
  const CliResult same = run_cli("compare '" + base + "' '" + base + "' --fail-on-regression");
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("8 SAME, 0 FASTER, 0 SLOWER") != std::string::npos);

  Report slower = measured_report();
  scale_row_time(slower, 4, 1.3);
  const std::string next = write_report("slower.json", slower);
  const CliResult reported = run_cli("compare '" + base + "' '" + next + "'");
  CHECK(reported.exit_code == 0);  // without the gate a regression is only printed
  CHECK(reported.out.find("REGRESSION") != std::string::npos);
  const std::string json_path = temp_path("compare.json");
  const CliResult gated = run_cli("compare '" + base + "' '" + next +
                                  "' --fail-on-regression --json '" + json_path + "'");
  CHECK(gated.exit_code == 1);
  const json document = json::parse(read_file(json_path));
  CHECK(document["schema"] == "cuflash-roofline/compare/v2");
  CHECK(document["regression"] == true);
  CHECK(document["pairs"][0]["counts"]["SLOWER"] == 1);

  Report dirty = measured_report();
  dirty.provenance.auditable = false;
  dirty.provenance.reasons = {"built from a dirty tree"};
  const std::string unauditable = write_report("dirty.json", dirty);
  const CliResult refused = run_cli("compare '" + unauditable + "' '" + base + "'");
  CHECK(refused.exit_code == 2);
  CHECK(lines(refused.err) == 1);
  CHECK(refused.err.find("pass --allow-unauditable") != std::string::npos);
  const CliResult allowed =
      run_cli("compare '" + unauditable + "' '" + base + "' --allow-unauditable");
  CHECK(allowed.exit_code == 0);
  CHECK(allowed.out.find("!! BASELINE NOT AUDITABLE") != std::string::npos);

  Report h100 = measured_report();
  h100.devices[0].name = "NVIDIA H100 80GB HBM3";
  const std::string other = write_report("h100.json", h100);
  CHECK(run_cli("compare '" + base + "' '" + other + "'").exit_code == 2);
  CHECK(run_cli("compare '" + base + "' '" + other + "' --allow-cross-device")
            .out.find("!! CROSS-DEVICE") != std::string::npos);
}

TEST_CASE("compare --figures shows figure-table figures base -> new; an unknown tag is one line") {
  const std::string base = write_report("figures-base.json", measured_report());
  Report slower = measured_report();
  scale_row_time(slower, 4, 2.0);  // fa1_wmma N=1024: half the TFLOP/s
  const std::string next = write_report("figures-slower.json", slower);
  const std::string json_path = temp_path("compare-figures.json");
  const CliResult shown =
      run_cli("compare '" + base + "' '" + next +
              "' --figures achieved/TFLOPs,model/regime --json '" + json_path + "'");
  CHECK(shown.exit_code == 0);
  const Figure& tflops = figure("achieved/TFLOPs");
  const std::string expected =
      fmt::format("    TFLOPS {} -> {}; point regime memory-bound -> memory-bound\n",
                  format_figure(tflops, figure_value(tflops, measured_report().results[4])),
                  format_figure(tflops, figure_value(tflops, slower.results[4])));
  CHECK(shown.out.find(expected) != std::string::npos);
  const json row = json::parse(read_file(json_path))["pairs"][0]["rows"][4];
  CHECK(row["figures"]["achieved/TFLOPs"]["new"].get<double>() ==
        Approx(row["figures"]["achieved/TFLOPs"]["base"].get<double>() / 2));

  const CliResult unknown = run_cli("compare '" + base + "' '" + base + "' --figures speed");
  CHECK(unknown.exit_code == 2);
  CHECK(lines(unknown.err) == 1);
  CHECK(unknown.err.find("--figures: unknown figure 'speed' (known: model/flops,") !=
        std::string::npos);
}

TEST_CASE("compare: AMBIGUOUS passes --fail-on-regression, fails --fail-on-ambiguous; geomeans") {
  const std::string base = write_report("ambiguous-base.json", measured_report());
  Report changed = measured_report();
  // fa1_wmma N=4096 0.5% slower: beyond --threshold 0.001, but its [min, q3] interval overlaps
  // the base's (test_compare.cpp): AMBIGUOUS.
  scale_row_time(changed, 6, 1.005);
  const std::string next = write_report("ambiguous-new.json", changed);
  const std::string json_path = temp_path("compare-ambiguous.json");
  const std::string pair = "compare '" + base + "' '" + next + "' --threshold 0.001 ";
  const CliResult gate = run_cli(pair + "--fail-on-regression --json '" + json_path + "'");
  CHECK(gate.exit_code == 0);
  CHECK(gate.out.find("AMBIGUOUS (median +0.5% beyond the 0.1% threshold") != std::string::npos);
  CHECK(gate.out.find("REGRESSION") == std::string::npos);
  const json document = json::parse(read_file(json_path));
  CHECK(document["ambiguous"] == true);
  CHECK(document["regression"] == false);
  CHECK(document["significance"] == 0.05);
  CHECK(document["pairs"][0]["counts"]["AMBIGUOUS"] == 1);
  // One row x1.005 among eight timed rows: 1.005^(1/8) = 1.00062
  CHECK(document["geomean"]["rows"] == 8);
  CHECK(document["geomean"]["ratio"].get<double>() == Approx(1.000623));
  CHECK(document["pairs"][0]["geomean"] == document["geomean"]);

  const CliResult strict = run_cli(pair + "--fail-on-ambiguous");
  CHECK(strict.exit_code == 1);
  CHECK(strict.out.find("AMBIGUOUS: at least one row's medians and samples disagree") !=
        std::string::npos);

  // Two pairs: each comparison ends with its own geomean, then one over both.
  const CliResult two = run_cli("compare '" + base + "' '" + next + "' '" + base + "' '" + base +
                                "' --threshold 0.001");
  CHECK(two.exit_code == 0);
  CHECK(two.out.find("geomean new/base 1.0006 over 8 rows timed on both sides") !=
        std::string::npos);
  CHECK(two.out.find("geomean new/base 1.0000 over 8 rows timed on both sides") !=
        std::string::npos);
  // (1.005 * 1^15)^(1/16) = 1.00031
  CHECK(two.out.find("total: geomean new/base 1.0003 over 16 rows timed on both sides") !=
        std::string::npos);

  for (const std::string level : {"0", "0.6", "nan", "-0.1"}) {
    const CliResult refused = run_cli(pair + "--significance " + level);
    CHECK(refused.exit_code == 2);
    CHECK(lines(refused.err) == 1);
    CHECK(refused.err.find("--significance") != std::string::npos);
  }
}

TEST_CASE("compare matches two folders by file name and lists the leftovers") {
  const std::string base_dir = temp_path("base-dir");
  const std::string new_dir = temp_path("new-dir");
  std::filesystem::create_directories(base_dir);
  std::filesystem::create_directories(new_dir);
  const std::string text = to_json(measured_report()).dump();
  std::ofstream(base_dir + "/h200.json") << text;
  std::ofstream(new_dir + "/h200.json") << text;
  std::ofstream(base_dir + "/old-only.json") << text;
  const CliResult result = run_cli("compare '" + base_dir + "' '" + new_dir + "'");
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("== " + base_dir + "/h200.json -> " + new_dir + "/h200.json") !=
        std::string::npos);
  CHECK(result.out.find("file only in base: " + base_dir + "/old-only.json") != std::string::npos);
  CHECK(run_cli("compare --roofline '" + base_dir + "'").out.find("fraction of the roof") !=
        std::string::npos);
  CHECK(run_cli("compare '" + base_dir + "/h200.json'").exit_code == 2);  // not a pair
}

TEST_CASE("plot writes a well-formed SVG; --png needs rsvg-convert and says so") {
  const std::string report = write_report("plot.json", measured_report());
  const std::string svg = temp_path("roofline.svg");
  const CliResult result = run_cli("plot '" + report + "' --out '" + svg + "'");
  CHECK(result.exit_code == 0);
  CHECK(result.out == "wrote " + svg + ": 8 measured points, 0 model points, 2 roofs\n");
  const XmlElement root = parse_xml(read_file(svg));
  CHECK(find_all(root, [](const XmlElement& e) { return e.has_class("point"); }).size() == 8);

  const std::string png = temp_path("roofline.png");
  const CliResult without = run_with_path(
      "/nonexistent", "plot '" + report + "' --out '" + svg + "' --png '" + png + "'");
  CHECK(without.exit_code == 2);
  CHECK(lines(without.err) == 1);
  CHECK(without.err.find("rsvg-convert is not installed") != std::string::npos);
  if (std::system("command -v rsvg-convert >/dev/null 2>&1") == 0) {
    const CliResult with = run_cli("plot '" + report + "' --out '" + svg + "' --png '" + png + "'");
    CHECK(with.exit_code == 0);
    CHECK(read_file(png).starts_with("\x89PNG"));
  }
}

TEST_CASE("plot --energy draws the energy rows under a ceilings --energy file's lines") {
  const std::string report = write_report("energy-sweep.json", every_kernel_report());
  const std::string ceilings =
      write_temp("energy-ceilings.json", to_json(energy_ceilings()).dump());
  const std::string svg = temp_path("energy-roofline.svg");
  const CliResult drawn =
      run_cli("plot --energy '" + report + "' --ceilings '" + ceilings + "' --out '" + svg + "'");
  CHECK(drawn.exit_code == 0);
  CHECK(drawn.out == "wrote " + svg + ": 1 energy points, 2 energy roofs from " + ceilings + "\n");
  const XmlElement root = parse_xml(read_file(svg));
  CHECK(find_all(root, [](const XmlElement& e) { return e.has_class("energy-point"); }).size() ==
        1);
  CHECK(find_all(root, [](const XmlElement& e) { return e.has_class("choi-curve"); }).size() == 2);
}

TEST_CASE("plot --energy refuses, in one line naming the file, what has no energy") {
  const std::string energy = write_report("energy-sweep.json", every_kernel_report());
  const std::string plain = write_report("plain-sweep.json", measured_report());
  const std::string ceilings =
      write_temp("energy-ceilings.json", to_json(energy_ceilings()).dump());
  const std::string plain_ceilings = source_path("results/h200/ceilings.json");
  const std::string svg = temp_path("refused.svg");
  check_one_line_error(
      run_cli("plot --energy '" + plain + "' --ceilings '" + ceilings + "' --out '" + svg + "'"),
      {plain, "no ok row with energy figures"});
  check_one_line_error(run_cli("plot --energy '" + energy + "' --ceilings '" + plain_ceilings +
                               "' --out '" + svg + "'"),
                       {plain_ceilings, "no energy figures of dram_bandwidth"});
  const CliResult no_ceilings = run_cli("plot --energy '" + energy + "' --out '" + svg + "'");
  CHECK(no_ceilings.exit_code == 2);
  CHECK(lines(no_ceilings.err) == 1);
  CHECK(no_ceilings.err.find("needs a `ceilings --energy` report") != std::string::npos);
  CHECK_FALSE(file_exists(svg));
}

TEST_CASE(
    "import-historical writes one unauditable report per GPU, and audit lists the seed's "
    "inconsistencies") {
  const std::string table = source_path("configs/historical/v0.4.0.json");
  const std::string dir = temp_path("historical");
  const CliResult imported = run_cli("import-historical '" + table + "' --out-dir '" + dir + "'");
  CHECK(imported.exit_code == 0);
  CHECK(lines(imported.out) == 3);
  for (const char* gpu : {"v100", "a100", "h100"}) {
    CHECK(file_exists(dir + "/v0.4.0-" + gpu + ".json"));
  }
  const CliResult audited = run_cli("audit '" + dir + "/v0.4.0-v100.json'");
  CHECK(audited.exit_code == 1);
  // §5.1, V100 N=16,384: 549.8 GFLOP / 88.0 ms = 6.25 TFLOP/s against the printed 3.1.
  CHECK(audited.out.find("TFLOPs: the table prints 3.1 TFLOP/s, but its own FLOPs / time is "
                         "549.8 GFLOP / 88 ms = 6.25 TFLOP/s") != std::string::npos);

  const CliResult ambiguous =
      run_cli("import-historical '" + table + "' --out '" + temp_path("one.json") + "'");
  CHECK(ambiguous.exit_code == 2);
  CHECK(ambiguous.err.find("pass --gpu") != std::string::npos);
  const std::string one = temp_path("h100.json");
  CHECK(run_cli("import-historical '" + table + "' --out '" + one + "' --gpu h100").exit_code == 0);
  const Report h100 = report_from_json(json::parse(read_file(one)));
  CHECK(h100.results.size() == 4);
  CHECK(h100.provenance.source == ProvenanceSource::historical);

  const std::string svg = temp_path("historical.svg");
  const CliResult plotted = run_cli("plot '" + one + "' --out '" + svg + "'");
  CHECK(plotted.exit_code == 0);
  CHECK(read_file(svg).find(" unauditable</text>") != std::string::npos);
}
