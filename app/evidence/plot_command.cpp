// `cuflash-roofline plot REPORT… --out roofline.svg`: the roofline chart of
// the reports, written by roofline/evidence/roofline_svg; --png converts it
// with rsvg-convert when that is installed. Exit 0; 2 for an unusable file,
// nothing to plot, or a PNG that could not be made.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "report_file.hpp"
#include "roofline/ceilings_report.hpp"
#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/report_json.hpp"

extern char** environ;

namespace cfr::app {

namespace {

struct PlotOptions {
  std::vector<std::string> files;
  std::string out;
  std::string ceilings;
  std::string title;
  std::string png;
};

// A `ceilings` file as a roof: measured DRAM bandwidth and the best measured
// peak per compute unit.
CeilingRecord measured_roof(const std::string& path) {
  CeilingsReport measured;
  try {
    measured = ceilings_from_json(read_json_file(path));
  } catch (const ReportError& error) {
    throw std::runtime_error(fmt::format("{}: {}", path, error.what()));
  }
  const CeilingFigure* dram = measured.find("dram_bandwidth");
  if (dram == nullptr || dram->value <= 0) {
    throw std::runtime_error(fmt::format("{}: figures: no positive dram_bandwidth figure", path));
  }
  CeilingRecord roof;
  roof.gpu = measured.device.name.empty() ? path : measured.device.name;
  roof.source = "measured";
  roof.source_detail = path;
  roof.bandwidth_GBps = dram->value;
  for (ComputeUnit unit : all_compute_units) {
    roof.peak_TFLOPs[static_cast<std::size_t>(unit)] = measured.best_peak(unit);
  }
  return roof;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "";
  while (!dirs.empty()) {
    const auto colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return false;
}

void convert_to_png(const std::string& svg, const std::string& png) {
  if (!on_path("rsvg-convert")) {
    throw std::runtime_error(fmt::format(
        "--png {}: rsvg-convert is not installed (Debian: apt-get install librsvg2-bin); the SVG "
        "is at {}",
        png, svg));
  }
  std::vector<std::string> words{"rsvg-convert", "--format", "png", "--output", png, svg};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t child = 0;
  const int spawned =
      ::posix_spawnp(&child, "rsvg-convert", nullptr, nullptr, argv.data(), environ);
  if (spawned != 0) {
    throw std::runtime_error(
        fmt::format("--png {}: cannot run rsvg-convert: {}", png, std::strerror(spawned)));
  }
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    throw std::runtime_error(fmt::format("--png {}: rsvg-convert failed on {}", png, svg));
  }
}

void run(const PlotOptions& options) {
  const std::vector<Report> reports = read_reports(options.files);
  evidence::PlotOptions chart;
  chart.title = options.title;
  if (!options.ceilings.empty()) chart.extra_ceilings.push_back(measured_roof(options.ceilings));
  std::vector<evidence::PlotReport> inputs;
  for (std::size_t i = 0; i < reports.size(); ++i)
    inputs.push_back({options.files[i], &reports[i]});

  evidence::PlotSummary summary;
  const std::string svg = evidence::roofline_svg(inputs, chart, &summary);
  if (summary.points + summary.model_points == 0) {
    throw std::runtime_error(
        fmt::format("{}: nothing to plot: no row with status ok and an arithmetic intensity",
                    options.files.front()));
  }
  if (!options.png.empty() && options.out == "-") {
    throw std::runtime_error("--png needs --out to name a file, not '-'");
  }
  write_text_atomically(options.out, svg);
  std::ostream& screen = options.out == "-" ? std::cerr : std::cout;
  screen << fmt::format("wrote {}: {} measured points, {} model points, {} roofs\n", options.out,
                        summary.points, summary.model_points, summary.roofs);
  if (!options.png.empty()) {
    convert_to_png(options.out, options.png);
    screen << fmt::format("wrote {}\n", options.png);
  }
}

}  // namespace

void add_plot_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<PlotOptions>();
  CLI::App* command =
      app.add_subcommand("plot", "draw a roofline chart (SVG) of one or more reports");
  command->add_option("reports", options->files, "report JSON files")->required();
  command->add_option("--out", options->out, "SVG file to write ('-' for stdout)")->required();
  command->add_option("--ceilings", options->ceilings,
                      "a `ceilings` JSON whose measured roofs are drawn solid");
  command->add_option("--title", options->title, "chart title (default: the GPUs' names)");
  command->add_option("--png", options->png,
                      "also write a PNG through rsvg-convert (fails when it is not installed)");
  add_version_flag(*command);
  command->callback([options, &status] {
    run(*options);
    status.exit_status = 0;
  });
}

}  // namespace cfr::app
