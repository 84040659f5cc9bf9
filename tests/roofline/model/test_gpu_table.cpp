#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/model/gpu_table.hpp"
#include "tests/shipped_gpus.hpp"

using namespace cfr;
using nlohmann::json;

namespace {

std::string error_of(const json& document) {
  try {
    parse_gpu_table(document, "my.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("configs/gpus.json: the seed's ceilings reproduce (§2) and V100's 31.4 is fp16 SIMT") {
  const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "configs/gpus.json");
  // Every row of the file, in its order; the rows whose figures are pinned below among them.
  CHECK(table.ids() == test::shipped_gpu_ids());
  for (const char* id : {"v100", "a100", "h100", "h200", "rtx3060"}) REQUIRE(table.find(id));
  const GpuSpec& v100 = *table.find("v100");
  CHECK(v100.memory_bandwidth_GBps.value == 900);
  CHECK(*v100.peak(ComputeUnit::fp16_simt) == 31.4);
  CHECK(*v100.peak(ComputeUnit::fp16_tensor) == 125);  // not the seed's 31.4
  CHECK_FALSE(v100.peak(ComputeUnit::bf16_tensor));    // Volta has no bf16
  CHECK(*v100.ridge(ComputeUnit::fp16_simt) == Approx(34.9).margin(0.05));
  CHECK(*table.find("a100")->ridge(ComputeUnit::fp16_tensor) == Approx(153).margin(0.05));
  CHECK(*table.find("h100")->ridge(ComputeUnit::fp16_tensor) == Approx(295).margin(0.5));
  CHECK(*table.find("h200")->ridge(ComputeUnit::bf16_tensor) == Approx(206.1).margin(0.05));
  CHECK(table.find("a100")->memory_bandwidth_GBps.value == 2039);
  CHECK(*table.find("a100")->peak(ComputeUnit::fp16_tensor) == 312);
  CHECK(table.find("h100")->memory_bandwidth_GBps.value == 3350);
  CHECK(table.find("rtx3060")->compute_capability == "8.6");
}

TEST_CASE("every figure of the shipped table names its source document") {
  for (const GpuSpec& gpu : parse_gpu_table(test::shipped_gpu_table(), "t").gpus) {
    INFO(gpu.id);
    CHECK_FALSE(gpu.memory_bandwidth_GBps.source.empty());
    CHECK_FALSE(gpu.sm_count.source.empty());
    CHECK_FALSE(gpu.l2_bytes.source.empty());
    CHECK_FALSE(gpu.shared_memory_per_sm_bytes.source.empty());
    for (const auto& peak : gpu.peak_TFLOPs) {
      if (peak) CHECK_FALSE(peak->source.empty());
    }
  }
}

TEST_CASE("lookup is case-insensitive; --gpu auto matches by name and compute capability") {
  const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "t");
  CHECK(table.find("A100") == table.find("a100"));
  CHECK(table.find("b200") == nullptr);
  CHECK(table.match_device("NVIDIA H200", "9.0")->id == "h200");
  CHECK(table.match_device("NVIDIA H100 80GB HBM3", "9.0")->id == "h100");
  CHECK(table.match_device("NVIDIA A100-SXM4-80GB", "8.0")->id == "a100");
  CHECK(table.match_device("NVIDIA H200", "8.0") == nullptr);
  CHECK(table.match_device("NVIDIA L4", "8.9") == nullptr);
}

TEST_CASE("a missing or non-numeric field fails with one line naming file, GPU and field") {
  json table = test::shipped_gpu_table();
  json missing = table;
  test::gpu_row(missing, "a100").erase("memory_bandwidth_GBps");
  CHECK(error_of(missing) == "my.json: gpu 'a100': field 'memory_bandwidth_GBps' is missing");

  json text = table;
  test::gpu_row(text, "h100")["peak_TFLOPs"]["fp16_tensor"]["value"] = "fast";
  CHECK(error_of(text) ==
        "my.json: gpu 'h100': field 'peak_TFLOPs.fp16_tensor.value' is not a number");

  json no_source = table;
  test::gpu_row(no_source, "v100")["sm_count"].erase("source");
  CHECK(error_of(no_source) == "my.json: gpu 'v100': field 'sm_count.source' is missing");

  json null_bandwidth = table;
  test::gpu_row(null_bandwidth, "v100")["memory_bandwidth_GBps"]["value"] = nullptr;
  CHECK(error_of(null_bandwidth) ==
        "my.json: gpu 'v100': field 'memory_bandwidth_GBps.value' is null");

  json negative = table;
  test::gpu_row(negative, "h200")["sm_count"]["value"] = -1;
  CHECK(error_of(negative) ==
        "my.json: gpu 'h200': field 'sm_count.value' must be a positive number");

  json no_unit = table;
  test::gpu_row(no_unit, "rtx3060")["peak_TFLOPs"].erase("bf16_tensor");
  CHECK(error_of(no_unit) == "my.json: gpu 'rtx3060': field 'peak_TFLOPs.bf16_tensor' is missing");

  json no_cc = table;
  test::gpu_row(no_cc, "a100")["compute_capability"]["value"] = "sm_80";
  CHECK(error_of(no_cc) ==
        "my.json: gpu 'a100': field 'compute_capability.value' must be a "
        "compute capability like \"8.0\"");

  json twice = table;
  twice["gpus"].push_back(test::gpu_row(table, "v100"));
  CHECK(error_of(twice) == "my.json: gpu 'v100' appears twice");

  CHECK(error_of(json::array()) == "my.json: top level must be an object");
  CHECK(error_of(json{{"gpus", json::array()}}) == "my.json: key 'gpus' must be a non-empty list");
}

TEST_CASE("ncu_chip: Nsight Compute's chip name, with its source; optional, a plain word") {
  // gh100: the chip ncu profiled this workplace's H200 as (tests/roofline/fixtures/ncu/).
  const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "t");
  CHECK(table.find("h200")->ncu_chip == "gh100");
  CHECK(table.find("h200")->ncu_chip_source.find("query-metrics-gh100.txt") != std::string::npos);
  CHECK(table.find("h100")->ncu_chip == "gh100");
  CHECK(table.find("a100")->ncu_chip.empty());  // none given: ncu asks the local device

  json table_json = test::shipped_gpu_table();
  json no_source = table_json;
  test::gpu_row(no_source, "h200")["ncu_chip"].erase("source");
  CHECK(error_of(no_source) == "my.json: gpu 'h200': field 'ncu_chip.source' is missing");
  json words = table_json;
  test::gpu_row(words, "h200")["ncu_chip"]["value"] = "gh100 --target-processes all";
  CHECK(error_of(words) ==
        "my.json: gpu 'h200': field 'ncu_chip.value' must be lowercase "
        "letters and digits, like \"gh100\"");
  json bare = table_json;
  test::gpu_row(bare, "h200")["ncu_chip"] = "gh100";
  CHECK(error_of(bare) == "my.json: gpu 'h200': field 'ncu_chip' must be an object");
}

TEST_CASE("l2_loop_kept_bytes: measured by the loop probe, with its source; optional") {
  const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "t");
  const auto& h100 = table.find("h100")->l2_loop_kept_bytes;
  REQUIRE(h100);
  CHECK(h100->value == 22.0 * 1024 * 1024);
  CHECK(h100->source.find("results/h100/l2-loop-") != std::string::npos);
  CHECK_FALSE(table.find("a100")->l2_loop_kept_bytes);  // never measured

  json table_json = test::shipped_gpu_table();
  json zero = table_json;
  test::gpu_row(zero, "h100")["l2_loop_kept_bytes"]["value"] = 0;
  CHECK(error_of(zero) ==
        "my.json: gpu 'h100': field 'l2_loop_kept_bytes.value' must be a positive number");
  json no_source = table_json;
  test::gpu_row(no_source, "h100")["l2_loop_kept_bytes"].erase("source");
  CHECK(error_of(no_source) == "my.json: gpu 'h100': field 'l2_loop_kept_bytes.source' is missing");
  json unknown = table_json;
  test::gpu_row(unknown, "h100")["l2_loop_kept_bytes"]["value"] = nullptr;
  CHECK(error_of(unknown) == "my.json: gpu 'h100': field 'l2_loop_kept_bytes.value' is null");
}

TEST_CASE("a GPU added to the file is one entry: found, matched, listed and given its ridges") {
  // docs/model.md, "Adding a GPU": nothing but the entry (shipped_gpus.hpp).
  const GpuTable table = parse_gpu_table(test::table_with_made_up_gpu(), "plus-one.json");
  REQUIRE(table.gpus.size() == test::shipped_gpu_ids().size() + 1);
  CHECK(table.ids().back() == "zz9000");
  CHECK(table.find("ZZ9000") == &table.gpus.back());
  CHECK(table.match_device("NVIDIA ZZ 9000 PCIe", "12.0") == &table.gpus.back());
  CHECK(table.match_device("NVIDIA ZZ 9000 PCIe", "9.0") == nullptr);
  CHECK(table.match_device("NVIDIA H200", "9.0")->id == "h200");  // the others as before
  CHECK(table.gpus.back().cc() == ComputeCapability{12, 0});
  CHECK(*table.gpus.back().ridge(ComputeUnit::fp16_tensor) == Approx(989.4 / 8000 * 1000));
  CHECK(table.gpus.back().ncu_chip == "gz100");
}
