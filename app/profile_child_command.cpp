// `cuflash-roofline profile-child`: the launch mode `sweep --profile` runs
// under Nsight Compute (hidden; tests/gpu/single_launch.cu was its
// prototype). Each row gets seeded inputs and --warmup launches outside the
// NVTX ranges, then for each of its --launches profiled launches k
//   push "cfr_profile", push "cfr_row_<index>", push "cfr_launch_<k>",
//   <the kernel's launches>, pop, pop, pop
// so `ncu --nvtx --nvtx-include cfr_profile/` profiles exactly the kernel's
// own launches (cuBLAS's included for naive), and the CSV's range columns
// name the row and the launch. A backward row runs its registry forward
// partner outside the ranges first, for O and LSE.
//
// With --time-samples N the child also times each row first, by the cold
// timer over the same buffers (unprofiled), and before the rows times and
// profiles the timer floors, k = 1..--floor-kernels empty kernels in range
// "cfr_floor_<device x 1000 + k>": the timing check of the timer alone
// (docs/model.md §8.2). Those samples go to --timing-out as JSON.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kernels/bench/row_stages.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"
#include "kernels/measure/empty_launches.hpp"
#include "plugin_options.hpp"
#include "profile_rows.hpp"
#include "roofline/profile/ncu_csv.hpp"
#include "roofline/report/report_json.hpp"

namespace cfr::app {

namespace {

// Pops the ranges it pushed, whatever the launch did.
class ProfiledRange {
 public:
  ProfiledRange(std::string_view group_prefix, std::size_t index, int launch) {
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(fmt::format("{}{}", group_prefix, index).c_str());
    nvtxRangePushA(fmt::format("{}{}", ncu::launch_range_prefix, launch).c_str());
  }
  ~ProfiledRange() {
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
  }
  ProfiledRange(const ProfiledRange&) = delete;
  ProfiledRange& operator=(const ProfiledRange&) = delete;
};

// The row's launches over the inputs and buffers the sweep's bench makes
// (kernels/bench/row_stages.hpp: K/V by K/V heads and keys, a paged cache's
// pages and table, a zeroed workspace), its own launches alone inside the
// row's NVTX ranges: a backward row's forward partner and the warm-up
// launches run before them.
struct LaunchCounts {
  int warmup = 1;
  int profiled = 1;
};

// The child's own timing (--time-samples > 0): the cold timer's options and
// where its samples go.
struct ChildTiming {
  int samples = 0;  // 0: no timing
  int warmup = 1;
  double max_seconds = 2.0;
  double max_noise_percent = 0.5;
  double throttle_percent = 75;
  std::string l2_flush = "read";  // read, memset or none
  int floor_kernels = 4;
  std::string out_path;
  // Cleared once a sample waited out the stream blocker (a launch that waits
  // on the host): every later timing goes without the blocker.
  bool block_stream = true;

  measure::TimingOptions options() const {
    measure::TimingOptions o;
    o.warmup_runs = warmup;
    o.min_samples = samples;
    o.max_samples = std::max(samples, 1);
    o.target_rel_stdev = max_noise_percent / 100;
    o.max_seconds = max_seconds;
    o.flush_l2 = l2_flush != "none";
    if (o.flush_l2) o.l2_flush_mode = *measure::parse_l2_flush_mode(l2_flush);
    o.throttle_threshold = throttle_percent / 100;
    o.block_stream = block_stream;
    return o;
  }
};

// The warm-up launches outside the ranges, then each profiled launch k in
// ranges <group_prefix><index> / cfr_launch_<k>: a row's and a floor's alike.
void launch_in_ranges(std::string_view group_prefix, std::size_t index, LaunchCounts counts,
                      const std::function<void()>& launch_once) {
  for (int i = 0; i < counts.warmup; ++i) launch_once();
  for (int k = 0; k < counts.profiled; ++k) {
    ProfiledRange range(group_prefix, index, k);
    launch_once();
  }
}

// Times `launch` as the sweep does, over the buffers it already has.
nlohmann::json time_here(const bench::LaunchFunction& launch, ChildTiming& timing,
                         cudaStream_t stream) {
  const measure::TimingResult result = bench::time_row(launch, timing.options(), stream);
  if (!result.stream_blocked) timing.block_stream = false;
  return process_timing_json({result.samples_ms, result.sm_clock_MHz, result.stream_blocked});
}

// The timer floors of one device: k empty kernels timed, then profiled as a
// row's launches are, for k = 1..floor_kernels.
void run_floors(int device, LaunchCounts counts, ChildTiming& timing, nlohmann::json& floors) {
  CFR_CUDA_CHECK(cudaSetDevice(device));
  measure::CudaStream stream;
  for (int kernels = 1; kernels <= timing.floor_kernels; ++kernels) {
    const bench::LaunchFunction launch = [kernels](cudaStream_t s) {
      return measure::launch_empty_kernels(s, kernels);
    };
    nlohmann::json floor = time_here(launch, timing, stream.get());
    floor["device"] = device;
    floor["kernels"] = kernels;
    floors.push_back(std::move(floor));
    launch_in_ranges(ncu::floor_range_prefix,
                     static_cast<std::size_t>(ncu::floor_range_index(device, kernels)), counts,
                     [&] {
                       CFR_CUDA_CHECK(launch(stream.get()));
                       CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
                     });
  }
}

// The row's own timing, when asked for; null otherwise.
nlohmann::json run_row(const ProfileRow& row, std::uint64_t seed, LaunchCounts counts,
                       ChildTiming& timing) {
  CFR_CUDA_CHECK(cudaSetDevice(row.device));
  measure::CudaStream stream;
  const kernels::KernelEntry* entry = kernels::registry().find(row.kernel);
  if (entry == nullptr) throw std::runtime_error(fmt::format("unknown kernel '{}'", row.kernel));
  const OrReason<bench::RowLaunchers> resolved =
      bench::resolve_row(entry->description, measure::compute_capability_of(row.device));
  if (const auto* why = std::get_if<std::string>(&resolved)) throw std::runtime_error(*why);
  const bench::RowLaunchers& launchers = std::get<bench::RowLaunchers>(resolved);
  std::optional<measure::CublasHandle> cublas;
  if (launchers.uses_cublas()) {
    cublas.emplace();
    CFR_CUBLAS_CHECK(measure::cublas().set_stream(cublas->get(), stream));
  }
  bench::ProblemData data;
  data.problem = row.problem;
  data.seed = bench::problem_seed(seed, row.problem);
  data.backward = launchers.backward != nullptr;
  bench::fill_inputs(data, stream);
  std::string launch_message;
  bench::RowBuffers buffers = bench::allocate_row(
      launchers, data, stream, cublas ? cublas->get() : nullptr, &launch_message);
  if (launchers.backward != nullptr) {
    CFR_CUDA_CHECK(
        launchers.forward->launch(buffers.shape, buffers.forward_io, buffers.forward_context));
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const bench::LaunchFunction launch = bench::timed_launch(launchers, buffers);
  const auto launch_once = [&] {
    const cudaError_t error = launch(stream.get());
    if (error != cudaSuccess) {
      throw std::runtime_error(launch_message.empty() ? measure::cuda_error_text(error)
                                                      : launch_message);
    }
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  };
  // A timing that fails costs the row its process timing, not its counters.
  nlohmann::json timed;
  if (timing.samples > 0) {
    try {
      timed = time_here(launch, timing, stream.get());
    } catch (const std::exception& error) {
      std::fprintf(stderr, "profile-child: row %zu (%s): not timed: %s\n", row.index,
                   row.kernel.c_str(), error.what());
    }
  }
  launch_in_ranges(ncu::row_range_prefix, row.index, counts, launch_once);
  return timed;
}

// Whole or not at all: a child killed mid-write leaves the last complete
// file, and a file it cannot write costs the timings, not the profile.
void write_timing(const std::string& path, const nlohmann::json& timing) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << timing.dump() << '\n';
    if (out.flush()) {
      std::error_code error;
      std::filesystem::rename(temporary, path, error);
      if (!error) return;
    }
  }
  std::fprintf(stderr, "profile-child: --timing-out: cannot write '%s'\n", path.c_str());
}

}  // namespace

void add_profile_child_command(CLI::App& app, CommandStatus& status) {
  auto rows_path = std::make_shared<std::string>();
  auto seed = std::make_shared<std::uint64_t>(0);
  CLI::App* command = app.add_subcommand(
      "profile-child", "run rows inside NVTX ranges (sweep --profile runs it under ncu)");
  command->group("");  // hidden: an implementation detail of sweep --profile
  command->add_option("--rows", *rows_path, "the rows file sweep --profile wrote")->required();
  command->add_option("--seed", *seed, "seed of the random inputs");
  auto counts = std::make_shared<LaunchCounts>();
  command->add_option("--warmup", counts->warmup, "unprofiled launches of each row first")
      ->check(CLI::Range(0, 99));
  command
      ->add_option("--launches", counts->profiled,
                   "profiled launches of each row, each in its range")
      ->check(CLI::Range(1, 99));
  auto plugins = std::make_shared<PluginOptions>();
  command->add_option("--plugin", plugins->paths, "a plugin the profiled sweep loaded");
  auto timing = std::make_shared<ChildTiming>();
  command
      ->add_option("--time-samples", timing->samples,
                   "time each row first (cold timer, same buffers) with this many samples")
      ->check(CLI::Range(0, 100000));
  command->add_option("--time-warmup", timing->warmup)->check(CLI::Range(0, 1000));
  command->add_option("--time-max-seconds", timing->max_seconds)->check(CLI::Range(0.01, 3600.0));
  command->add_option("--time-max-noise", timing->max_noise_percent)->check(CLI::Range(0.0, 100.0));
  command->add_option("--time-throttle", timing->throttle_percent)->check(CLI::Range(0.0, 100.0));
  command->add_option("--time-l2-flush", timing->l2_flush)
      ->check(CLI::IsMember({"read", "memset", "none"}));
  command->add_option("--floor-kernels", timing->floor_kernels, "timer floors of 1..K kernels")
      ->check(CLI::Range(0, 16));
  command->add_option("--timing-out", timing->out_path, "where the timings go (JSON)");
  command->callback([rows_path, seed, plugins, counts, timing, &status] {
    if (timing->samples > 0 && timing->out_path.empty()) {
      throw std::runtime_error("--time-samples needs --timing-out FILE");
    }
    load_plugins(*plugins);
    std::ifstream in(*rows_path);
    if (!in) throw std::runtime_error(fmt::format("--rows: cannot read '{}'", *rows_path));
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<ProfileRow> rows = parse_profile_rows(text.str());
    int failed = 0;
    nlohmann::json timings{{"rows", nlohmann::json::array()}, {"floors", nlohmann::json::array()}};
    if (timing->samples > 0) {
      std::set<int> devices;
      for (const ProfileRow& row : rows) devices.insert(row.device);
      for (int device : devices) {
        try {
          run_floors(device, *counts, *timing, timings["floors"]);
        } catch (const std::exception& error) {
          std::fprintf(stderr, "profile-child: timer floors on device %d: %s\n", device,
                       error.what());
        }
      }
      write_timing(timing->out_path, timings);
    }
    for (const ProfileRow& row : rows) {
      try {
        nlohmann::json timed = run_row(row, *seed, *counts, *timing);
        if (!timed.is_null()) {
          timed["index"] = row.index;
          timings["rows"].push_back(std::move(timed));
          write_timing(timing->out_path, timings);
        }
        std::printf("profile-child: row %zu ran\n", row.index);
      } catch (const std::exception& error) {
        ++failed;
        std::fprintf(stderr, "profile-child: row %zu (%s): %s\n", row.index, row.kernel.c_str(),
                     error.what());
      }
    }
    status.exit_status = failed == 0 ? 0 : 1;
  });
}

}  // namespace cfr::app
