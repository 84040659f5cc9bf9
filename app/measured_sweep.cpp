#include "measured_sweep.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "ceiling_choice.hpp"
#include "cli_checks.hpp"
#include "device_record.hpp"
#include "gpu_choice.hpp"
#include "kernels/bench/attention_bench.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/device_info.hpp"
#include "kernels/measure/device_selection.hpp"
#include "profile_run.hpp"
#include "report_file.hpp"
#include "report_output.hpp"
#include "roofline/core/sample_validity.hpp"
#include "roofline/report/auditability.hpp"
#include "roofline/report/measured_row.hpp"
#include "roofline/report/row_model.hpp"
#include "tool_info.hpp"

namespace cfr::app {

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

extern "C" char** environ;

std::optional<std::string> profiler_in_environment() {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    entries.emplace_back(*entry);
  }
  return external_profiler(entries);
}

// Serializes progress lines, row updates and report rewrites across the
// per-device threads.
class SweepState {
 public:
  SweepState(Report report, const OutputFiles& outputs)
      : report_(std::move(report)),
        outputs_(outputs),
        start_(std::chrono::steady_clock::now()),
        finished_(report_.results.size(), false) {}

  std::size_t total() const { return report_.results.size(); }
  ResultRow row(std::size_t index) {
    std::lock_guard lock(mutex_);
    return report_.results[index];
  }

  void begin(std::size_t index, int device) {
    std::lock_guard lock(mutex_);
    const double elapsed = seconds_since_start();
    std::string eta = "ETA -";
    if (done_ > 0) {
      eta = fmt::format("ETA {:.0f} s", elapsed / static_cast<double>(done_) *
                                            static_cast<double>(measurable_ - done_));
    }
    std::cerr << fmt::format("[{}/{}] device {}: {} ({})\n", done_ + 1, measurable_, device,
                             row_label(report_.results[index]), eta);
  }

  void finish(std::size_t index, ResultRow row) {
    std::lock_guard lock(mutex_);
    report_.results[index] = std::move(row);
    finished_[index] = true;
    ++done_;
    const ResultRow& r = report_.results[index];
    if (r.status != RowStatus::ok) {
      std::cerr << fmt::format("    {}: {}\n", to_string(r.status), r.reason);
    } else if (r.timing) {
      std::cerr << fmt::format("    median {:.4f} ms over {} samples, check {}\n",
                               r.timing->summary.median, r.timing->samples_ms.size(),
                               r.correctness && r.correctness->passed ? "passed" : "FAILED");
    }
    write_partial();
  }

  void set_measurable(std::size_t count) { measurable_ = count; }

  Report take() {
    std::lock_guard lock(mutex_);
    return std::move(report_);
  }

 private:
  double seconds_since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // Rewrites the report after every row, so a crash or a kill loses nothing
  // measured; the final write replaces it with the complete report. A row not
  // reached yet is written as skipped, saying so: left `ok` with no timing, a
  // report of a killed sweep would show configurations that never ran as fine.
  void write_partial() {
    if (!outputs_.rewritable("--json")) return;
    Report partial = report_;
    for (std::size_t i = 0; i < partial.results.size(); ++i) {
      ResultRow& row = partial.results[i];
      if (finished_[i] || row.status != RowStatus::ok) continue;
      row.status = RowStatus::skipped;
      row.reason =
          "not measured: the sweep had not reached this configuration when this "
          "partial report was written";
    }
    partial.provenance.auditable = false;
    partial.provenance.reasons.push_back(
        fmt::format("incomplete: {} of {} configurations done", done_, measurable_));
    outputs_.write({{"--json", report_text(partial)}});
  }

  std::mutex mutex_;
  Report report_;
  const OutputFiles& outputs_;
  std::chrono::steady_clock::time_point start_;
  std::vector<bool> finished_;  // by row index
  std::size_t done_ = 0;
  std::size_t measurable_ = 0;
};

void measure_on_device(int device, const std::vector<std::size_t>& indices,
                       const bench::BenchSettings& settings, const CeilingRecord& ceiling,
                       SweepState& state) {
  std::optional<bench::DeviceSession> session;
  std::string lost;
  try {
    session.emplace(device);
  } catch (const std::exception& error) {
    lost = fmt::format("device {} unusable: {}", device, error.what());
  }
  for (std::size_t index : indices) {
    ResultRow row = state.row(index);
    if (interrupted.load()) {
      row.status = RowStatus::skipped;
      row.reason = "interrupted before this configuration ran";
      state.finish(index, std::move(row));
      continue;
    }
    if (!lost.empty()) {
      row.status = RowStatus::failed;
      row.reason = lost;
      state.finish(index, std::move(row));
      continue;
    }
    state.begin(index, device);
    const KernelDescription& kernel = kernels::registry().find(row.kernel)->description;
    bench::BenchResult result;
    try {
      result = session->run(kernel, row.problem, settings);
    } catch (const std::exception& error) {
      result.status = RowStatus::failed;
      result.reason = error.what();
    }
    row.status = result.status;
    row.reason = result.reason;
    row.correctness = result.correctness;
    record_timing(row, result.timing, ceiling, profiler_in_environment());
    if (result.energy && row.status == RowStatus::ok) {
      row.energy = std::move(result.energy);
      record_energy_figures(*row.energy, row.model->flops.counted());
    }
    if (result.device_lost) lost = fmt::format("device {} lost after: {}", device, result.reason);
    state.finish(index, std::move(row));
  }
}

}  // namespace

void check_measure_inputs(const MeasureOptions& measure, const ProfileOptions& profile,
                          bool will_measure) {
  measure::check_device_list(measure.devices);
  if (measure.ceiling != "datasheet" && measure.ceiling != "measured") {
    try {
      read_ceilings_file(measure.ceiling);
    } catch (const std::exception& error) {
      throw std::invalid_argument(fmt::format("--ceiling {}: {}", measure.ceiling, error.what()));
    }
  }
  if (will_measure && profile.enabled) {
    if (auto missing = ncu_not_found(profile)) throw std::invalid_argument("--ncu: " + *missing);
  }
}

std::vector<const CLI::Option*> add_measure_options(CLI::App& command, MeasureOptions& o) {
  const std::size_t before = command.get_options().size();
  command.add_option("--devices", o.devices, "CUDA devices to measure on: 0,1 or all")
      ->check(not_empty())
      ->capture_default_str();
  command
      .add_option("--ceiling", o.ceiling,
                  "roof to judge against: datasheet, measured (run `ceilings` now) or a "
                  "ceilings JSON file")
      ->check(not_empty())
      ->capture_default_str();
  command.add_flag("--hot", o.hot, "do not flush L2 before each sample");
  command
      .add_option("--l2-flush", o.l2_flush,
                  "how L2 is flushed before each sample: read (a kernel reads twice the L2, "
                  "leaving clean lines, as ncu --cache-control all) or memset (nvbench's way, "
                  "leaving dirty lines whose write-back the sample pays)")
      ->check(CLI::IsMember({"read", "memset"}))
      ->capture_default_str();
  command.add_flag("--energy", o.energy,
                   "the board's energy per row from NVML's energy counter, around a run of "
                   "back-to-back launches (docs/energy.md)");
  command.add_option("--warmup", o.warmup, "untimed runs before sampling")
      ->capture_default_str()
      ->check(integer_in(0, 1000));
  command.add_option("--min-samples", o.min_samples, "fewest samples per configuration")
      ->capture_default_str()
      ->check(integer_in(1, 100000));
  command
      .add_option("--max-noise", o.max_noise_percent,
                  "stop sampling once the relative stdev is below this, in percent (as "
                  "nvbench's --max-noise)")
      ->type_name("PERCENT")
      ->capture_default_str()
      ->check(finite_number(0.0, 100.0));
  command
      .add_option("--throttle-threshold", o.throttle_threshold_percent,
                  "discard (and count) a sample whose SM clock reads below this percent of the "
                  "device's max clock; 0 keeps every sample (as nvbench's --throttle-threshold)")
      ->type_name("PERCENT")
      ->capture_default_str()
      ->check(finite_number(0.0, 100.0));
  command.add_option("--max-seconds", o.max_seconds, "time cap per configuration (s)")
      ->capture_default_str()
      ->check(finite_number(0.01, 3600.0));
  command.add_option("--seed", o.seed, "seed of the random inputs")
      ->capture_default_str()
      ->check(unsigned_integer());
  const std::vector<CLI::Option*> all = command.get_options();
  return {all.begin() + static_cast<std::ptrdiff_t>(before), all.end()};
}

int run_measured_sweep(const SweepOptions& options, const MeasureOptions& measure,
                       const SweepPlan& plan, const OutputFiles& outputs,
                       const ProfileOptions& profile) {
  const std::vector<int> devices =
      measure::parse_device_list(measure.devices, measure::device_count());
  Report report;
  report.tool = current_tool_info();
  report.provenance.source = ProvenanceSource::measured;
  report.provenance.created_utc = utc_now_iso8601();
  report.provenance.command = command_line();
  report.provenance.host = host_name();
  report.provenance.plugins = plan.plugins;
  for (int device : devices) report.devices.push_back(device_record(measure::query_device(device)));

  const GpuTable table = load_gpu_table(options.gpu_table);
  const ChosenCeiling chosen = choose_ceiling(table, options.gpu, measure.ceiling, report.devices);
  report.ceiling = chosen.ceiling;
  for (const std::string& warning : chosen.warnings) {
    std::cerr << "WARNING: " << warning << '\n';
  }

  bench::BenchSettings settings;
  settings.seed = measure.seed;
  settings.timing.warmup_runs = measure.warmup;
  settings.timing.min_samples = measure.min_samples;
  settings.timing.target_rel_stdev = measure.max_noise_percent / 100;
  settings.timing.max_seconds = measure.max_seconds;
  settings.timing.flush_l2 = !measure.hot;
  settings.timing.l2_flush_mode = *cfr::measure::parse_l2_flush_mode(measure.l2_flush);
  settings.timing.throttle_threshold = measure.throttle_threshold_percent / 100;
  settings.energy = measure.energy;

  std::vector<const GpuSpec*> device_rows;
  for (const DeviceRecord& device : report.devices) {
    device_rows.push_back(table.match_device(device.name, device.cc));
  }
  std::vector<std::vector<std::size_t>> work(devices.size());
  std::size_t measurable = 0;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    for (const SweepPoint& point : plan.points) {
      ResultRow row = model_row(*point.kernel, point.problem, report.ceiling, plan.convention,
                                parse_compute_capability(report.devices[d].cc),
                                l2_model_inputs(report.devices[d], device_rows[d]));
      row.device = devices[d];
      if (row.status == RowStatus::ok) {
        work[d].push_back(report.results.size());
        ++measurable;
      }
      report.results.push_back(std::move(row));
    }
  }

  if (const auto profiler = profiler_in_environment()) {
    std::cerr << "WARNING: running under an external profiler (" << *profiler
              << "): timings are not measurements; rows without usable samples fail\n";
  }
  const CeilingRecord ceiling = report.ceiling;
  SweepState state(std::move(report), outputs);
  state.set_measurable(measurable);
  interrupted.store(false);
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  // A closed terminal (SIGHUP) stops the sweep as Ctrl-C does, with the report written.
  auto previous_hup = std::signal(SIGHUP, on_interrupt);
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < devices.size(); ++d) {
    threads.emplace_back(measure_on_device, devices[d], std::cref(work[d]), std::cref(settings),
                         std::cref(ceiling), std::ref(state));
  }
  for (std::thread& thread : threads) thread.join();

  Report done = state.take();
  // Profiling keeps the handler: Ctrl-C stops ncu (same process group), the
  // rows say their counters are missing, and the report is still written.
  const bool timing_interrupted = interrupted.load();
  if (profile.enabled && !timing_interrupted) {
    ProfileOptions timed_like_sweep = profile;
    timed_like_sweep.timer = {measure.warmup, measure.max_seconds, measure.max_noise_percent,
                              measure.throttle_threshold_percent,
                              measure.hot ? "none" : measure.l2_flush};
    std::cerr << profile_report(done, timed_like_sweep, table, measure.seed) << '\n';
    if (interrupted.load()) {
      done.provenance.reasons.push_back("interrupted (Ctrl-C) while profiling");
    }
  }
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  std::signal(SIGHUP, previous_hup);
  bool any_failed = false;
  for (const ResultRow& row : done.results)
    any_failed = any_failed || row.status == RowStatus::failed;
  if (timing_interrupted)
    done.provenance.reasons.push_back("interrupted (Ctrl-C): not every configuration ran");
  for (const std::string& reason : chosen.reasons) done.provenance.reasons.push_back(reason);
  const std::vector<std::string> failures = auditability_failures(done);
  done.provenance.auditable = failures.empty() && !timing_interrupted;
  done.provenance.reasons.insert(done.provenance.reasons.end(), failures.begin(), failures.end());
  emit_report(done, outputs);
  if (interrupted.load()) return 130;
  return any_failed ? 1 : 0;
}

}  // namespace cfr::app
