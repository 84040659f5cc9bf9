#include "profile_run.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "profile_rows.hpp"
#include "roofline/core/errors.hpp"
#include "roofline/profile/ncu_csv.hpp"
#include "roofline/profile/ncu_query.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/profile/recorded_launch.hpp"
#include "roofline/report/json_reader.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr::app {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view tool_name = "Nsight Compute";

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_line(const std::string& text) {
  std::string last;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last = line;
  }
  return last;
}

// A scratch folder for ncu's input and output, removed when done.
class ScratchDir {
 public:
  ScratchDir() : path_(fs::temp_directory_path() / fmt::format("cfr-profile-{}", ::getpid())) {
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(std::string_view name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

struct NcuRun {
  std::string ncu;
  std::string version;
  std::string command;
  ncu::MetricNames chip_metrics;
  std::vector<std::string> plugins;      // passed on to the child
  int launches = 1;                      // profiled launches of each row
  std::vector<std::string> timing_args;  // the child's --time-* options; empty: no timing
};

// The unprofiled launches profile-child runs of a row before its profiled
// ones, as the sweep warms up before it times: what a kernel's first launch
// in a process pays once (loading its module, cold instruction caches) is
// not what the sweep's median saw.
constexpr int child_warmup_launches = 1;

// The rows to profile and their devices' compute capabilities.
std::vector<std::size_t> profiled_rows(const Report& report) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const ResultRow& row = report.results[i];
    if (row.status == RowStatus::ok && row.model) rows.push_back(i);
  }
  return rows;
}

std::optional<ComputeCapability> device_cc(const Report& report, const ResultRow& row) {
  const DeviceRecord* device = device_of(report, row);
  if (device == nullptr) return std::nullopt;
  return parse_compute_capability(device->cc);
}

// ncu's --chip name for the row's device: its GPU table row's ncu_chip
// (configs/gpus.json), matched as --gpu auto matches; empty when the table
// names none, and ncu is asked about the local device instead.
std::optional<std::string> ncu_chip(const Report& report, const ResultRow& row,
                                    const GpuTable& gpus) {
  const DeviceRecord* device = device_of(report, row);
  const GpuSpec* gpu = device ? gpus.match_device(device->name, device->cc) : nullptr;
  if (gpu == nullptr || gpu->ncu_chip.empty()) return std::nullopt;
  return gpu->ncu_chip;
}

void mark_unavailable(Report& report, const std::vector<std::size_t>& rows, const NcuRun& run,
                      const std::string& reason) {
  for (std::size_t index : rows) {
    Profile profile;
    profile.tool = tool_name;
    profile.version = run.version;
    profile.command = run.command;
    profile.unavailable = reason;
    report.results[index].profile = std::move(profile);
  }
}

// The metric names the chip has, by `ncu --query-metrics`; an error line
// when the query fails.
OrReason<ncu::MetricNames> query_metrics(const std::string& ncu,
                                         const std::optional<std::string>& chip,
                                         const ScratchDir& dir) {
  std::vector<std::string> argv{ncu, "--query-metrics"};
  if (chip) argv.insert(argv.end(), {"--chip", *chip});
  const ChildResult result = run_child(argv, dir.file("query.txt"), dir.file("query.log"));
  const std::string output = read_text(dir.file("query.txt")) + read_text(dir.file("query.log"));
  ncu::MetricNames names = ncu::parse_query_metrics(output);
  if (result.exit_status == 0 && !names.empty()) return names;
  if (const auto reason = ncu::counters_unavailable_reason(output)) return *reason;
  return fmt::format("`{}` failed (exit {}): {}", shell_words(argv), result.exit_status,
                     result.error.empty() ? last_line(output) : result.error);
}

// What profile-child timed (--timing-out): each row's samples by index, and
// the timer floors by device and kernel count.
struct ChildTimings {
  std::map<std::int64_t, ProcessTiming> rows;
  std::map<std::pair<int, int>, ProcessTiming> floors;  // (device, kernels)
};

// Empty when the child wrote nothing (no timing asked, or it failed first);
// a malformed file is the child's bug and says so.
ChildTimings read_child_timings(const std::string& path) {
  ChildTimings out;
  std::ifstream in(path);
  if (!in) return out;
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    const Node top(doc, "");
    const nlohmann::json& rows = top.array("rows");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Node row(rows[i], fmt::format("rows[{}]", i));
      out.rows[row.integer("index")] = read_process_timing(row);
    }
    const nlohmann::json& floors = top.array("floors");
    for (std::size_t i = 0; i < floors.size(); ++i) {
      const Node floor(floors[i], fmt::format("floors[{}]", i));
      out.floors[{floor.int32("device"), floor.int32("kernels")}] = read_process_timing(floor);
    }
  } catch (const std::exception& error) {
    std::cerr << fmt::format("WARNING: profile-child's timings '{}' unreadable: {}\n", path,
                             error.what());
    return {};
  }
  return out;
}

// The timer floor of a row of `kernels` kernels on `device`: the child's
// events and ncu's duration of each profiled floor launch.
std::optional<TimerFloor> timer_floor(
    const ChildTimings& timings, int device, int kernels,
    const std::map<std::int64_t, std::vector<ncu::RowCounters>>& floor_ranges) {
  const auto timed = timings.floors.find({device, kernels});
  const auto profiled = floor_ranges.find(ncu::floor_range_index(device, kernels));
  if (timed == timings.floors.end() || profiled == floor_ranges.end()) return std::nullopt;
  TimerFloor floor;
  floor.kernels = kernels;
  floor.events = timed->second;
  for (const ncu::RowCounters& launch : profiled->second) {
    const ncu::MetricValue* ns = launch.metric("gpu__time_duration.sum");
    floor.ncu_ns.push_back(ns != nullptr ? ns->value : std::nullopt);
  }
  return floor;
}

void attach_counters(Report& report, const std::vector<std::size_t>& rows, const NcuRun& run,
                     const std::map<std::int64_t, std::vector<ncu::RowCounters>>& ranges,
                     const std::map<std::int64_t, std::vector<ncu::RowCounters>>& floor_ranges,
                     const ChildTimings& timings, int exit_status) {
  for (std::size_t index : rows) {
    ResultRow& row = report.results[index];
    Profile profile;
    profile.tool = tool_name;
    profile.version = run.version;
    profile.command = run.command;
    const auto found = ranges.find(static_cast<std::int64_t>(index));
    if (found == ranges.end()) {
      profile.unavailable = fmt::format("no launches in NVTX range {}{} of ncu's CSV (ncu exit {})",
                                        ncu::row_range_prefix, index, exit_status);
      row.profile = std::move(profile);
      continue;
    }
    ProfileLaunches launches = choose_recorded_launch(found->second, child_warmup_launches);
    const ncu::RowCounters& recorded = found->second[launches.recorded];
    profile.counters = profile_counters(recorded, run.chip_metrics);
    profile.launches = std::move(launches);
    if (const auto timed = timings.rows.find(static_cast<std::int64_t>(index));
        timed != timings.rows.end()) {
      profile.process_timing = timed->second;
      profile.timer_floor =
          timer_floor(timings, row.device.value_or(0),
                      static_cast<int>(recorded.kernel_names.size()), floor_ranges);
    }
    row.profile = std::move(profile);
    row.profile->derived = profile_figures(row, report.ceiling, device_cc(report, row));
  }
}

// What the one ncu process gave: the rows' counters by range, or why there
// are none for any row.
struct NcuOutput {
  std::optional<std::string> unavailable;
  std::map<std::int64_t, std::vector<ncu::RowCounters>> ranges;  // each row's launches
  std::map<std::int64_t, std::vector<ncu::RowCounters>> floor_ranges;
  ChildTimings timings;
  int exit_status = 0;
  std::string last_log_line;
};

// Runs ncu over the child with the metrics the chip has; run.command records it.
NcuOutput run_profiler(const Report& report, const std::vector<std::size_t>& rows, NcuRun& run,
                       const ScratchDir& dir, std::uint64_t seed) {
  NcuOutput out;
  std::vector<std::string> metrics;
  for (const std::string& metric : profile_metrics()) {
    if (ncu::chip_has(run.chip_metrics, metric)) metrics.push_back(metric);
  }
  if (metrics.empty()) {
    out.unavailable = "none of the metrics sweep --profile asks for is on this chip";
    return out;
  }
  std::vector<ProfileRow> child_rows;
  for (std::size_t index : rows) {
    const ResultRow& row = report.results[index];
    child_rows.push_back({index, row.kernel, row.problem, row.device.value_or(0)});
  }
  std::ofstream(dir.file("rows.txt")) << format_profile_rows(child_rows);
  // The data collection of tests/gpu/device_run.sh step l2data, which worked on the H200.
  std::vector<std::string> argv{run.ncu,
                                "--csv",
                                "--page",
                                "raw",
                                "--print-units",
                                "base",
                                "--clock-control",
                                "none",
                                "--cache-control",
                                "all",
                                "--nvtx",
                                "--nvtx-include",
                                "cfr_profile/",
                                "--metrics",
                                fmt::format("{}", fmt::join(metrics, ","))};
  argv.insert(argv.end(),
              {self_executable(), "profile-child", "--rows", dir.file("rows.txt"), "--seed",
               std::to_string(seed), "--warmup", std::to_string(child_warmup_launches),
               "--launches", std::to_string(run.launches)});
  argv.insert(argv.end(), run.timing_args.begin(), run.timing_args.end());
  if (!run.timing_args.empty()) argv.insert(argv.end(), {"--timing-out", dir.file("timing.json")});
  for (const std::string& plugin : run.plugins) argv.insert(argv.end(), {"--plugin", plugin});
  run.command = shell_words(argv);
  std::cerr << fmt::format("profile: {} rows, {} launch{} each after a warm-up, under {} ({})\n",
                           rows.size(), run.launches, run.launches == 1 ? "" : "es", run.ncu,
                           run.version);
  const ChildResult result = run_child(argv, dir.file("ncu.csv"), dir.file("ncu.log"));
  const std::string csv = read_text(dir.file("ncu.csv"));
  const std::string log = read_text(dir.file("ncu.log"));
  out.exit_status = result.exit_status;
  out.last_log_line = last_line(log);
  if (const auto reason = ncu::counters_unavailable_reason(csv + log)) {
    out.unavailable = *reason;
  } else if (!result.error.empty()) {
    out.unavailable = result.error;
  } else {
    try {
      const std::vector<ncu::Launch> launches = ncu::parse_raw_csv(csv);
      out.ranges = ncu::group_row_launches(launches);
      out.floor_ranges = ncu::group_row_launches(launches, ncu::floor_range_prefix);
      if (!run.timing_args.empty()) out.timings = read_child_timings(dir.file("timing.json"));
    } catch (const std::exception& error) {
      out.unavailable = fmt::format("ncu's CSV (exit {}): {}; {}", result.exit_status, error.what(),
                                    out.last_log_line);
    }
  }
  return out;
}

// The child's --time-* options: the sweep's cold timer, options.time_samples samples.
std::vector<std::string> child_timing_args(const ProfileOptions& options) {
  if (options.time_samples <= 0) return {};
  const ProfileOptions::TimerSettings& timer = options.timer;
  return {"--time-samples",     std::to_string(options.time_samples),
          "--time-warmup",      std::to_string(timer.warmup),
          "--time-max-seconds", fmt::format("{}", timer.max_seconds),
          "--time-max-noise",   fmt::format("{}", timer.max_noise_percent),
          "--time-throttle",    fmt::format("{}", timer.throttle_percent),
          "--time-l2-flush",    timer.l2_flush};
}

}  // namespace

void add_profile_options(CLI::App& command, ProfileOptions& o) {
  command.add_flag("--profile", o.enabled,
                   "after timing, re-run every ok row under Nsight Compute and record its "
                   "counters (one ncu process)");
  command.add_option("--ncu", o.ncu, "the Nsight Compute CLI for --profile")->capture_default_str();
  command
      .add_option("--profile-launches", o.launches,
                  "profiled launches of each row after a warm-up one; the row records the "
                  "median launch's counters")
      ->check(CLI::Range(1, 99))
      ->capture_default_str();
  command
      .add_option("--profile-time-samples", o.time_samples,
                  "samples of each row the profiled process times first, over the buffers "
                  "ncu's launches use, with the timer's own cost (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
}

std::optional<std::string> ncu_not_found(const ProfileOptions& options) {
  if (find_executable(options.ncu)) return std::nullopt;
  return fmt::format("ncu not found: '{}' is not an executable{} (--ncu PATH names it)",
                     options.ncu, options.ncu.find('/') == std::string::npos ? " on PATH" : "");
}

std::string profile_report(Report& report, const ProfileOptions& options, const GpuTable& gpus,
                           std::uint64_t seed) {
  const std::vector<std::size_t> rows = profiled_rows(report);
  if (rows.empty()) return "profile: no ok rows to profile";
  NcuRun run;
  const auto unavailable = [&](const std::string& reason) {
    mark_unavailable(report, rows, run, reason);
    return "profile: " + reason;
  };
  const auto ncu = find_executable(options.ncu);
  if (!ncu) return unavailable(*ncu_not_found(options));
  run.ncu = *ncu;
  run.plugins = options.plugins;
  run.launches = options.launches;
  run.timing_args = child_timing_args(options);
  ScratchDir dir;
  run_child({run.ncu, "--version"}, dir.file("version.txt"), dir.file("version.log"));
  run.version = last_line(read_text(dir.file("version.txt")));
  auto chip = query_metrics(run.ncu, ncu_chip(report, report.results[rows.front()], gpus), dir);
  if (auto* error = std::get_if<std::string>(&chip)) return unavailable(*error);
  run.chip_metrics = std::get<ncu::MetricNames>(std::move(chip));

  const NcuOutput output = run_profiler(report, rows, run, dir, seed);
  if (output.unavailable) return unavailable(*output.unavailable);
  attach_counters(report, rows, run, output.ranges, output.floor_ranges, output.timings,
                  output.exit_status);
  std::size_t collected = 0;
  for (std::size_t index : rows) collected += report.results[index].profile->collected() ? 1 : 0;
  return fmt::format("profile: {} of {} rows profiled by {} (ncu exit {}{})", collected,
                     rows.size(), run.version, output.exit_status,
                     output.exit_status == 0 ? "" : ": " + output.last_log_line);
}

}  // namespace cfr::app
