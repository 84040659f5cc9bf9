// `cuflash-roofline profile-child`: the single-launch mode `sweep --profile`
// runs under Nsight Compute (hidden; tests/gpu/single_launch.cu was its
// prototype). Each row gets seeded inputs outside the NVTX ranges, then
//   push "cfr_profile", push "cfr_row_<index>", <the kernel's launches>, pop, pop
// so `ncu --nvtx --nvtx-include cfr_profile/` profiles exactly the kernel's
// own launches (cuBLAS's included for naive), and the CSV's range column names
// the row. A backward row runs its registry forward partner outside the
// ranges first, for O and LSE.
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
  explicit ProfiledRange(std::size_t index) {
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(fmt::format("{}{}", ncu::row_range_prefix, index).c_str());
  }
  ~ProfiledRange() {
    nvtxRangePop();
    nvtxRangePop();
  }
  ProfiledRange(const ProfiledRange&) = delete;
  ProfiledRange& operator=(const ProfiledRange&) = delete;
};

// The row's launches over the inputs and buffers the sweep's bench makes
// (kernels/bench/row_stages.hpp: K/V by K/V heads and keys, a paged cache's
// pages and table, a zeroed workspace), its own launch alone inside the
// row's NVTX range: a backward row's forward partner runs before it.
void run_row(const ProfileRow& row, std::uint64_t seed) {
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
  {
    ProfiledRange range(row.index);
    const cudaError_t error = launch(stream.get());
    if (error != cudaSuccess) {
      throw std::runtime_error(launch_message.empty() ? measure::cuda_error_text(error)
                                                      : launch_message);
    }
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  }
}

}  // namespace

void add_profile_child_command(CLI::App& app, CommandStatus& status) {
  auto rows_path = std::make_shared<std::string>();
  auto seed = std::make_shared<std::uint64_t>(0);
  CLI::App* command = app.add_subcommand(
      "profile-child", "run rows once each inside NVTX ranges (sweep --profile runs it under ncu)");
  command->group("");  // hidden: an implementation detail of sweep --profile
  command->add_option("--rows", *rows_path, "the rows file sweep --profile wrote")->required();
  command->add_option("--seed", *seed, "seed of the random inputs");
  auto plugins = std::make_shared<PluginOptions>();
  command->add_option("--plugin", plugins->paths, "a plugin the profiled sweep loaded");
  command->callback([rows_path, seed, plugins, &status] {
    load_plugins(*plugins);
    std::ifstream in(*rows_path);
    if (!in) throw std::runtime_error(fmt::format("--rows: cannot read '{}'", *rows_path));
    std::stringstream text;
    text << in.rdbuf();
    int failed = 0;
    for (const ProfileRow& row : parse_profile_rows(text.str())) {
      try {
        run_row(row, *seed);
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
