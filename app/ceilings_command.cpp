// `cuflash-roofline ceilings`: the empirical roofline of the local GPU.
#include <iostream>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "gpu_choice.hpp"
#include "kernels/measure/device_info.hpp"
#include "measured_ceilings.hpp"
#include "output_files.hpp"
#include "report_file.hpp"

namespace cfr::app {

namespace {

struct CeilingsOptions {
  int device = 0;
  std::string gpu = "auto";
  std::string gpu_table;
  std::string json_path;
  bool energy = false;
  bool instruction_roofs = false;
};

}  // namespace

void add_ceilings_command(CLI::App& app) {
  auto options = std::make_shared<CeilingsOptions>();
  CLI::App* command = app.add_subcommand(
      "ceilings", "measure DRAM and L2 bandwidth and compute peaks of the local GPU");
  add_version_flag(*command);
  command->add_option("--device", options->device, "CUDA device index")
      ->type_name("N")
      ->check(integer_in(0, std::numeric_limits<int>::max()))
      ->capture_default_str();
  command->add_option("--gpu", options->gpu, "datasheet row to compare with (or auto)")
      ->check(not_empty())
      ->capture_default_str();
  add_gpu_table_option(*command, options->gpu_table);
  add_output_option(*command, "--json", options->json_path, "write the ceilings JSON");
  command->add_flag("--energy", options->energy,
                    "also the board's energy per FLOP or byte of each figure, from NVML's energy "
                    "counter around a run of its launches (docs/energy.md)");
  command->add_flag("--instruction-roofs", options->instruction_roofs,
                    "also the shared-memory bandwidth and, on sm_90a, the wgmma peak (issue 23; "
                    "their kernels have not yet run on a device, so they are opt-in)");
  command->callback([options] {
    OutputFiles outputs;
    outputs.protect_input(options->gpu_table);
    outputs.add("--json", options->json_path);
    // The table and a named --gpu are the user's input: a bad one is a usage
    // error (exit 2) whether or not this machine has a device (exit 3).
    const GpuTable table = load_gpu_table(options->gpu_table);
    if (options->gpu != "auto") choose_gpu(table, options->gpu, std::nullopt);
    const int devices = measure::device_count();
    if (devices == 0) throw NoDeviceError("ceilings needs a CUDA device; none on this machine");
    if (options->device < 0 || options->device >= devices) {
      throw std::runtime_error(fmt::format("--device {}: no such device (this machine has {})",
                                           options->device, devices));
    }
    const measure::DeviceInfo info = measure::query_device(options->device);
    const GpuSpec* datasheet = nullptr;
    try {
      datasheet = &choose_gpu(table, options->gpu, LocalDevice{info.name, info.cc});
    } catch (const std::runtime_error& error) {
      if (options->gpu != "auto") throw;
      std::cerr << "WARNING: " << error.what() << " (no datasheet comparison)\n";
    }
    const CeilingsReport report = measure_ceilings_report(
        options->device, datasheet, {}, options->energy, options->instruction_roofs);
    (outputs.takes_stdout() ? std::cerr : std::cout) << render_ceilings_table(report);
    if (outputs.has("--json")) outputs.write({{"--json", json_text(to_json(report))}});
  });
}

}  // namespace cfr::app
