// `cuflash-roofline plot REPORT… --out roofline.svg`: the roofline chart of
// the reports, written by roofline/evidence/roofline_svg; with --energy, the
// energy roofline of their --energy rows against the energy ceilings of a
// `ceilings --energy` file (roofline/evidence/energy_roofline_svg); --png converts it
// with rsvg-convert when that is installed. Both are written together, after
// everything else succeeded. Exit 0; 2 for an unusable file, nothing to plot,
// or a PNG that could not be made (then nothing is written).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "report_file.hpp"
#include "roofline/evidence/energy_roofline_svg.hpp"
#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/report_json.hpp"

extern char** environ;

namespace cfr::app {

namespace {

struct PlotOptions {
  std::vector<std::string> files;
  std::string out;
  std::string ceilings;
  std::string title;
  std::string png;
  bool energy = false;
};

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

// A scratch file for rsvg-convert, removed when it goes out of scope.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    std::string name = std::string(P_tmpdir) + "/cuflash-roofline-XXXXXX" + suffix;
    const int fd = ::mkstemps(name.data(), static_cast<int>(std::strlen(suffix)));
    if (fd < 0)
      throw std::runtime_error(fmt::format("cannot create a scratch file in {}", P_tmpdir));
    ::close(fd);
    path_ = name;
  }
  ~ScratchFile() { ::unlink(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The PNG rsvg-convert makes of `svg`, as bytes; --png names the option.
std::string convert_to_png(const std::string& svg, const std::string& png) {
  const ScratchFile svg_file(".svg");
  const ScratchFile png_file(".png");
  std::ofstream(svg_file.path(), std::ios::binary) << svg;
  std::vector<std::string> words{"rsvg-convert", "--format",      "png",
                                 "--output",     png_file.path(), svg_file.path()};
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
    throw std::runtime_error(fmt::format("--png {}: rsvg-convert failed", png));
  }
  std::ifstream in(png_file.path(), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The roofline chart of the reports, under the ceilings' measured roofs; a
// line for the screen says what it drew.
std::string roofline_chart(const PlotOptions& options, const EvidenceFiles& files,
                           std::string& drawn) {
  evidence::PlotOptions chart;
  chart.title = options.title;
  for (std::size_t i = 0; i < files.ceilings.size(); ++i) {
    chart.extra_ceilings.push_back(measured_roof(files.ceilings[i], files.ceilings_paths[i]));
    name_like_reports(chart.extra_ceilings.back(), files.reports);
  }
  std::vector<evidence::PlotReport> inputs_to_plot;
  for (std::size_t i = 0; i < files.reports.size(); ++i)
    inputs_to_plot.push_back({files.report_paths[i], &files.reports[i]});

  evidence::PlotSummary summary;
  std::string svg = evidence::roofline_svg(inputs_to_plot, chart, &summary);
  if (summary.points + summary.model_points == 0) {
    throw std::runtime_error(
        fmt::format("{}: nothing to plot: no row with status ok and an arithmetic intensity",
                    files.report_paths.front()));
  }
  drawn = fmt::format("{} measured points, {} model points, {} roofs", summary.points,
                      summary.model_points, summary.roofs);
  return svg;
}

bool has_energy(const ResultRow& row) {
  return row.status == RowStatus::ok && row.energy && row.energy->collected() &&
         row.energy->derived.flop_per_J.has_value();
}

// The energy roofline of the reports' --energy rows against the first
// ceilings file that has energy figures; every report must have such rows.
std::string energy_chart(const PlotOptions& options, const EvidenceFiles& files,
                         std::string& drawn) {
  for (std::size_t i = 0; i < files.reports.size(); ++i) {
    const std::vector<ResultRow>& rows = files.reports[i].results;
    if (std::none_of(rows.begin(), rows.end(), has_energy)) {
      throw std::runtime_error(fmt::format(
          "{}: no ok row with energy figures (plot --energy needs a `sweep --energy` report)",
          files.report_paths[i]));
    }
  }
  if (files.ceilings.empty()) {
    throw std::runtime_error(
        "plot --energy needs a `ceilings --energy` report (--ceilings FILE) for its lines");
  }
  evidence::EnergyPlotOptions chart;
  chart.title = options.title;
  for (std::size_t i = 0; i < files.ceilings.size() && !chart.ceilings; ++i) {
    if (files.ceilings[i].dram_bytes_per_J()) {
      chart.ceilings = &files.ceilings[i];
      chart.ceilings_name = files.ceilings_paths[i];
    }
  }
  if (!chart.ceilings) {
    throw std::runtime_error(fmt::format(
        "{}: no energy figures of dram_bandwidth (plot --energy needs a `ceilings --energy` "
        "report)",
        files.ceilings_paths.front()));
  }
  std::vector<evidence::PlotReport> inputs_to_plot;
  for (std::size_t i = 0; i < files.reports.size(); ++i)
    inputs_to_plot.push_back({files.report_paths[i], &files.reports[i]});
  evidence::EnergyPlotSummary summary;
  std::string svg = evidence::energy_roofline_svg(inputs_to_plot, chart, &summary);
  drawn = fmt::format("{} energy points, {} energy roofs from {}", summary.points, summary.roofs,
                      chart.ceilings_name);
  return svg;
}

void run(const PlotOptions& options) {
  std::vector<std::string> inputs = options.files;
  if (!options.ceilings.empty()) inputs.push_back(options.ceilings);
  const OutputFiles outputs =
      evidence_outputs(inputs, {{"--out", options.out}, {"--png", options.png}});
  if (outputs.has("--png") && !on_path("rsvg-convert")) {
    throw std::runtime_error(fmt::format(
        "--png {}: rsvg-convert is not installed (Debian: apt-get install librsvg2-bin); nothing "
        "was written",
        options.png));
  }
  // A ceilings report among the files (plot results/h200/*.json) is drawn
  // as --ceilings is.
  EvidenceFiles files = read_evidence_files(options.files);
  if (!options.ceilings.empty()) {
    files.ceilings_paths.push_back(options.ceilings);
    files.ceilings.push_back(read_ceilings_file(options.ceilings));
  }
  if (files.reports.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: a ceilings report; plot needs at least one sweep or model report beside it",
        options.files.front()));
  }
  std::string drawn;
  const std::string svg =
      options.energy ? energy_chart(options, files, drawn) : roofline_chart(options, files, drawn);
  std::vector<OutputFiles::Content> contents{{"--out", svg}};
  if (outputs.has("--png")) contents.push_back({"--png", convert_to_png(svg, options.png)});
  outputs.write(contents);
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  for (const std::string& path : files.ceilings_paths) {
    if (path != options.ceilings && !options.energy)
      screen << path << ": a ceilings report, drawn as measured roofs\n";
  }
  screen << fmt::format("wrote {}: {}\n", options.out, drawn);
  if (outputs.has("--png")) screen << fmt::format("wrote {}\n", options.png);
}

}  // namespace

void add_plot_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<PlotOptions>();
  CLI::App* command =
      app.add_subcommand("plot", "draw a roofline chart (SVG) of one or more reports");
  add_input_option(*command, "reports", options->files, "report JSON files")->required();
  add_output_option(*command, "--out", options->out, "write the SVG")->required();
  add_input_option(*command, "--ceilings", options->ceilings,
                   "a `ceilings` JSON whose measured roofs are drawn solid");
  command->add_flag("--energy", options->energy,
                    "the energy roofline instead: FLOP per joule of the reports' `sweep --energy` "
                    "rows against the energy ceilings of a `ceilings --energy` file "
                    "(docs/energy.md)");
  command->add_option("--title", options->title, "chart title (default: the GPUs' names)")
      ->type_name("TEXT");
  add_output_option(*command, "--png", options->png,
                    "also write a PNG, made by rsvg-convert (without it, nothing is written),");
  add_version_flag(*command);
  command->callback([options, &status] {
    run(*options);
    status.exit_status = 0;
  });
}

}  // namespace cfr::app
