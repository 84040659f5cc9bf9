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
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include "commands.hpp"
#include "kernels/bench/row_stages.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/device_info.hpp"
#include "plugin_options.hpp"
#include "profile_rows.hpp"
#include "roofline/profile/ncu_csv.hpp"

namespace cfr::app {

namespace {

// Pops the ranges it pushed, whatever the launch did.
class ProfiledRange {
 public:
  ProfiledRange(std::size_t index, int launch) {
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(fmt::format("{}{}", ncu::row_range_prefix, index).c_str());
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

void run_row(const ProfileRow& row, std::uint64_t seed, LaunchCounts counts) {
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
  for (int i = 0; i < counts.warmup; ++i) launch_once();
  for (int k = 0; k < counts.profiled; ++k) {
    ProfiledRange range(row.index, k);
    launch_once();
  }
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
  command->callback([rows_path, seed, plugins, counts, &status] {
    load_plugins(*plugins);
    std::ifstream in(*rows_path);
    if (!in) throw std::runtime_error(fmt::format("--rows: cannot read '{}'", *rows_path));
    std::stringstream text;
    text << in.rdbuf();
    int failed = 0;
    for (const ProfileRow& row : parse_profile_rows(text.str())) {
      try {
        run_row(row, *seed, *counts);
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
