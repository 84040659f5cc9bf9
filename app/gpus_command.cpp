// `cuflash-roofline gpus`: the GPU table with ridge points.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "gpu_choice.hpp"
#include "output_files.hpp"
#include "report_file.hpp"

namespace cfr::app {

namespace {

struct GpusOptions {
  std::string gpu_table;
  std::string json_path;
};

std::string peak_cell(const GpuSpec& gpu, ComputeUnit unit) {
  const auto peak = gpu.peak(unit);
  const auto ridge = gpu.ridge(unit);
  if (!peak || !ridge) return "-";
  return fmt::format("{:g} ({:.1f})", *peak, *ridge);
}

void run(const GpusOptions& options) {
  OutputFiles outputs;
  outputs.protect_input(options.gpu_table);
  outputs.add("--json", options.json_path);
  const GpuTable table = load_gpu_table(options.gpu_table);
  if (outputs.has("--json")) {
    nlohmann::json rows = nlohmann::json::array();
    for (const GpuSpec& gpu : table.gpus) rows.push_back(to_json(gpu));
    outputs.write(
        {{"--json", json_text(nlohmann::json{{"origin", table.origin}, {"gpus", rows}})}});
    if (outputs.takes_stdout()) return;
  }
  std::cout << fmt::format(
      "{:<8} {:<26} {:>4} {:>4} {:>7} {:>7} {:>8}  {:<15} {:<15} {:<15} {:<15}\n", "id", "name",
      "cc", "SMs", "L2 MB", "smem KB", "BW GB/s", "fp32_simt", "fp16_simt", "fp16_tensor",
      "bf16_tensor");
  for (const GpuSpec& gpu : table.gpus) {
    std::cout << fmt::format(
        "{:<8} {:<26} {:>4} {:>4} {:>7.1f} {:>7.0f} {:>8.0f}  {:<15} {:<15} {:<15} {:<15}\n",
        gpu.id, gpu.name, gpu.compute_capability, gpu.sm_count.value,
        gpu.l2_bytes.value / (1 << 20), gpu.shared_memory_per_sm_bytes.value / 1024,
        gpu.memory_bandwidth_GBps.value, peak_cell(gpu, ComputeUnit::fp32_simt),
        peak_cell(gpu, ComputeUnit::fp16_simt), peak_cell(gpu, ComputeUnit::fp16_tensor),
        peak_cell(gpu, ComputeUnit::bf16_tensor));
  }
  std::cout << fmt::format(
      "\nPeaks in dense TFLOPS per compute unit, ridge point (FLOP/byte = peak / bandwidth) in "
      "brackets.\nSource: {}; each figure's document is in the table (--json shows them).\n",
      table.origin);
}

}  // namespace

void add_gpus_command(CLI::App& app) {
  auto options = std::make_shared<GpusOptions>();
  CLI::App* command = app.add_subcommand("gpus", "print the GPU table with ridge points");
  add_gpu_table_option(*command, options->gpu_table);
  add_output_option(*command, "--json", options->json_path, "write the table as JSON");
  add_version_flag(*command);
  command->callback([options] { run(*options); });
}

}  // namespace cfr::app
