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
#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "plugin_options.hpp"
#include "profile_rows.hpp"
#include "roofline/profile/ncu_csv.hpp"

namespace cfr::app {

namespace {

using kernels::Distribution;
using measure::DeviceBuffer;

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

// A handle for a row whose kernel (or forward partner) calls cuBLAS, bound
// to `stream`; none otherwise, so such rows never open the library.
std::optional<measure::CublasHandle> cublas_for(const kernels::KernelEntry& entry,
                                                const kernels::KernelEntry* partner,
                                                cudaStream_t stream) {
  const auto uses = [](const kernels::KernelEntry* e) {
    return e != nullptr && e->description.arithmetic == ArithmeticPath::library_gemm;
  };
  if (!uses(&entry) && !uses(partner)) return std::nullopt;
  std::optional<measure::CublasHandle> handle(std::in_place);
  CFR_CUBLAS_CHECK(measure::cublas().set_stream(handle->get(), stream));
  return handle;
}

void run_row(const ProfileRow& row, std::uint64_t seed) {
  CFR_CUDA_CHECK(cudaSetDevice(row.device));
  measure::CudaStream stream;
  const kernels::AttentionShape s = kernels::shape_of(row.problem);
  const std::size_t count = static_cast<std::size_t>(row.problem.heads_total() *
                                                     row.problem.seq_len * row.problem.head_dim);
  const std::size_t bytes = count * element_bytes(s.dtype);
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads * s.seq_len;
  DeviceBuffer q(bytes), k(bytes), v(bytes), o(bytes), lse(rows * sizeof(float));
  const std::uint64_t base = seed ^ (row.index * 0x9E3779B97F4A7C15ull);
  CFR_CUDA_CHECK(kernels::fill_random(q.data(), count, s.dtype, base ^ 0x51, Distribution::normal,
                                      stream.get()));
  CFR_CUDA_CHECK(kernels::fill_random(k.data(), count, s.dtype, base ^ 0x4B, Distribution::normal,
                                      stream.get()));
  CFR_CUDA_CHECK(kernels::fill_random(v.data(), count, s.dtype, base ^ 0x56, Distribution::uniform,
                                      stream.get()));
  const kernels::KernelEntry* entry = kernels::registry().find(row.kernel);
  if (entry == nullptr) throw std::runtime_error(fmt::format("unknown kernel '{}'", row.kernel));
  const kernels::KernelEntry* partner =
      entry->forward() != nullptr ? nullptr : kernels::registry().forward_partner(*entry);
  const std::optional<measure::CublasHandle> cublas_handle = cublas_for(*entry, partner, stream);
  const cublasHandle_t cublas = cublas_handle ? cublas_handle->get() : nullptr;
  const kernels::ForwardBuffers forward_io{q.data(), k.data(), v.data(), o.data(), lse.as<float>()};
  if (const kernels::ForwardKernel* kernel = entry->forward()) {
    DeviceBuffer workspace(kernel->workspace_bytes(s));
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    ProfiledRange range(row.index);
    CFR_CUDA_CHECK(
        kernel->launch(s, forward_io, {stream.get(), cublas, workspace.data(), workspace.bytes()}));
    CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return;
  }
  if (partner == nullptr) throw std::runtime_error("no forward partner for " + row.kernel);
  const kernels::ForwardKernel* forward = partner->forward();
  const kernels::BackwardKernel* backward = entry->backward();
  DeviceBuffer d_o(bytes), d_q(bytes), d_k(bytes), d_v(bytes);
  CFR_CUDA_CHECK(kernels::fill_random(d_o.data(), count, s.dtype, base ^ 0x644F,
                                      Distribution::uniform, stream.get()));
  DeviceBuffer forward_workspace(forward->workspace_bytes(s));
  CFR_CUDA_CHECK(forward->launch(
      s, forward_io, {stream.get(), cublas, forward_workspace.data(), forward_workspace.bytes()}));
  DeviceBuffer workspace(backward->workspace_bytes(s));
  const kernels::BackwardBuffers io{q.data(),        k.data(),   v.data(),   o.data(),  d_o.data(),
                                    lse.as<float>(), d_q.data(), d_k.data(), d_v.data()};
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  ProfiledRange range(row.index);
  CFR_CUDA_CHECK(
      backward->launch(s, io, {stream.get(), cublas, workspace.data(), workspace.bytes()}));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
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
