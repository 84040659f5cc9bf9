#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_traffic_model.hpp"
#include "roofline/model/traffic_model.hpp"
#include "roofline/profile/ncu_csv.hpp"
#include "roofline/profile/profile_checks.hpp"
#include "tests/roofline/ncu_fixtures.hpp"

// The L2-aware DRAM model and the FLOP check against every configuration Nsight Compute
// measured on the H200 (tests/roofline/fixtures/ncu/l2data.csv). The table of per-row errors
// is docs/l2-model-errors.md; this test regenerates it (CFR_REGENERATE_L2_TABLE=1) or checks
// that the committed one is what the model computes now.

using namespace cfr;
using namespace cfr::ncu;

namespace {

// The rows were measured on an H200: compute capability 9.0.
constexpr ComputeCapability h200_cc{9, 0};

// What the model cannot read from the recording: L2 partitions (NVIDIA A100 whitepaper, "A100
// L2 cache", the same organization on GH100, whose metrics count the traffic between them as
// lts__t_sectors_srcunit_ltcfabric) and the rows cuBLAS's GEMM CTAs own (its sm_90 kernels in
// the recording tile S with 64-256 rows; only where S stops fitting the L2 depends on it).
constexpr int l2_partitions = 2;
constexpr int gemm_block_rows = 128;

// fa2_mma as tests/gpu/single_launch.cu instantiated it: Br 128 (4 warps x 32 rows), Bc 64
// (128 for d = 32), heaviest causal Q block first; warps skip masked blocks on their own.
constexpr int fa2_br = 128;
constexpr int fa2_warp_rows = 32;
// fa1_wmma's warps own 16 query rows and skip masked blocks on their own.
constexpr int wmma_warp_rows = 16;

constexpr double max_error = 0.25;
constexpr double sector_bytes = 32;  // an L2 sector  // the target on every profiled row

struct Config {
  std::string kernel;
  AttentionProblem problem;
};

std::vector<Config> read_configs() {
  std::istringstream in(test::read_fixture("l2data-configs.txt"));
  std::vector<Config> configs;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> parts;
    std::istringstream fields(line);
    for (std::string part; std::getline(fields, part, ':');) parts.push_back(part);
    REQUIRE(parts.size() == 7);
    const std::optional<DType> dtype = parse_dtype(parts[1]);
    REQUIRE(dtype.has_value());
    configs.push_back({parts[0],
                       {std::stoll(parts[2]), std::stoll(parts[3]), std::stoll(parts[4]),
                        std::stoll(parts[5]), parts[6] == "1", *dtype}});
  }
  return configs;
}

double number(const MetricMap& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  REQUIRE(it != metrics.end());
  REQUIRE(it->second.available());
  return *it->second.value;
}

// Resident CTAs per SM as ncu computed them: the tightest of its occupancy limits.
int resident_ctas(const Launch& launch) {
  double ctas = 1e9;
  for (const char* limit :
       {"launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
        "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps"}) {
    ctas = std::min(ctas, number(launch.metrics, limit));
  }
  return static_cast<int>(ctas);
}

struct RowResult {
  std::int64_t row = 0;
  Config config;
  double measured_read = 0;
  double measured_write = 0;
  DramEstimate model;
  double error = 0;
  std::string l2_check = "-";    // structure model / lts__t_bytes - 1
  std::string flop_check = "-";  // counted / expected - 1
  double fabric_per_read = 0;    // bytes between the L2 partitions per DRAM byte read
};

struct Recording {
  std::vector<Launch> launches;
  std::map<std::int64_t, RowCounters> rows;
  std::vector<Config> configs;
};

const Recording& recording() {
  static const Recording data = [] {
    Recording r;
    r.launches = parse_raw_csv(test::read_fixture("l2data.csv"));
    r.rows = group_rows(r.launches);
    r.configs = read_configs();
    return r;
  }();
  return data;
}

std::vector<const Launch*> launches_of(const RowCounters& row) {
  std::vector<const Launch*> found;
  for (std::int64_t id : row.launch_ids) {
    const auto& all = recording().launches;
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const Launch& l) { return l.id == id; });
    REQUIRE(it != all.end());
    found.push_back(&*it);
  }
  return found;
}

std::string percent(double fraction) {
  return fmt::format("{:+.1f}%", 100 * fraction);
}

RowResult evaluate(std::int64_t index, const RowCounters& counters, const Config& config) {
  const std::vector<const Launch*> launches = launches_of(counters);
  const AttentionProblem& p = config.problem;
  const int head_dim = static_cast<int>(p.head_dim);
  const int sms = static_cast<int>(number(counters.metrics, "launch__sm_count"));
  const L2Config l2{number(counters.metrics, "device__attribute_l2_cache_size"), l2_partitions};
  RowResult result;
  result.row = index;
  result.config = config;
  result.measured_read = number(counters.metrics, "dram__bytes_read.sum");
  result.measured_write = number(counters.metrics, "dram__bytes_write.sum");
  const double lts_bytes = number(counters.metrics, "lts__t_bytes.sum");
  result.fabric_per_read = number(counters.metrics, "lts__t_sectors_srcunit_ltcfabric.sum") *
                           sector_bytes / result.measured_read;
  const double tensor_ops =
      number(counters.metrics, p.dtype == DType::bf16 ? "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
                                                      : "sm__ops_path_tensor_src_fp16.sum");
  const double ffma =
      number(counters.metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");

  if (config.kernel == "naive") {
    REQUIRE(launches.size() == 3);
    const MaterializedGeometry geometry{sms, resident_ctas(*launches[1]),
                                        resident_ctas(*launches[0]), gemm_block_rows};
    result.model = materialized_dram(p, geometry, l2);
    result.flop_check = percent(flop_check(tensor_ops * flops_per_tensor_op, p, 0, 0).residual);
  } else if (config.kernel == "fa1_bwd") {
    REQUIRE(launches.size() == 3);
    const TileShape tile = fa1_backward_kernel.tile_for(head_dim, h200_cc);
    const LaunchGeometry dk_dv{tile, resident_ctas(*launches[1]), sms};
    const LaunchGeometry dq{tile, resident_ctas(*launches[2]), sms};
    result.model = flash_backward_dram(p, dk_dv, dq, l2);
    const TrafficEstimate structure =
        estimate_traffic(p, Direction::backward, TrafficModelKind::fa1_backward, tile);
    result.l2_check = percent(model_error(structure.bytes, lts_bytes));
  } else {
    REQUIRE(launches.size() == 1);
    LaunchGeometry geometry{{}, resident_ctas(*launches[0]), sms};
    int mask_rows = 0;
    double counted = tensor_ops * flops_per_tensor_op;
    if (config.kernel == "fa2_mma") {
      geometry.tile = {fa2_br, head_dim == 32 ? 128 : 64};
      geometry.causal_order = CausalBlockOrder::heaviest_first;
      mask_rows = fa2_warp_rows;
    } else if (config.kernel == "fa1_wmma") {
      geometry.tile = fa1_wmma_kernel.tile_for(head_dim, h200_cc);
      mask_rows = wmma_warp_rows;
    } else {
      REQUIRE(config.kernel == "fa1_scalar");
      geometry.tile = fa1_scalar_kernel.tile_for(head_dim, h200_cc);
      mask_rows = geometry.tile.br;
      counted = ffma * flops_per_ffma;
    }
    REQUIRE(geometry.tile.tiled());
    result.model = flash_forward_dram(p, geometry, l2);
    const TrafficEstimate structure =
        estimate_traffic(p, Direction::forward, TrafficModelKind::kv_reload, geometry.tile);
    result.l2_check = percent(model_error(structure.bytes, lts_bytes));
    result.flop_check = percent(flop_check(counted, p, mask_rows, geometry.tile.bc).residual);
  }
  result.error = model_error(result.model.bytes(), result.measured_read + result.measured_write);
  return result;
}

const std::vector<RowResult>& results() {
  static const std::vector<RowResult> all = [] {
    const Recording& r = recording();
    REQUIRE(r.rows.size() == r.configs.size());
    std::vector<RowResult> out;
    for (const auto& [index, counters] : r.rows) {
      out.push_back(evaluate(index, counters, r.configs.at(static_cast<std::size_t>(index))));
    }
    return out;
  }();
  return all;
}

// Rows past max_error, each with the reason docs/model.md gives ("Limits").
const std::map<std::int64_t, std::string>& known_misses() {
  static const std::map<std::int64_t, std::string> misses{
      {102,
       "non-causal, one head's K/V (64 MiB) above the L2: each wave reads it about twice, "
       "the lock-step model once"},
      {103, "non-causal, one head's K/V (32 MiB) above the L2: as row 102"},
      {107,
       "waves straddle two heads whose K/V (2 x 16 MiB) just exceed 30 MiB: the model "
       "reloads, the H200 keeps them"},
  };
  return misses;
}

std::string table_markdown() {
  std::string out =
      "<!-- Generated by tests/roofline/model/test_l2_model_vs_ncu.cpp from "
      "tests/roofline/fixtures/ncu/l2data.csv; do not edit.\n"
      "     Regenerate: CFR_REGENERATE_L2_TABLE=1 build/tests/roofline/test_roofline "
      "'[l2data]' -->\n"
      "# The L2-aware DRAM model against Nsight Compute on an H200\n\n"
      "Every configuration of `tests/roofline/fixtures/ncu/l2data.csv` (one ncu process, "
      "`--cache-control all`: every launch starts with a flushed L2). DRAM bytes are "
      "`dram__bytes_read.sum + dram__bytes_write.sum` over the configuration's launches; the "
      "model is `l2_traffic_model.hpp` with the recording's SM count, L2 size and each launch's "
      "resident CTAs per SM (ncu's occupancy limits), two L2 partitions. *error* is model / "
      "measured - 1. *structure vs L2* is the kv_reload (forward) or fa1_backward model against "
      "`lts__t_bytes.sum`. *FLOPs* is counted FLOPs (tensor-pipe ops; 2 x FFMA for fa1_scalar) "
      "over the FLOPs the kernel's tiling computes (the exact count plus the masked half of the "
      "diagonal blocks), minus 1. docs/model.md (\"L2-aware DRAM bytes\") derives the model and "
      "explains the rows past ±25 %.\n\n";
  std::size_t within[3] = {0, 0, 0};
  double worst = 0;
  for (const RowResult& r : results()) {
    const double e = std::fabs(r.error);
    within[0] += e <= 0.05;
    within[1] += e <= 0.10;
    within[2] += e <= max_error;
    worst = std::max(worst, e);
  }
  double fabric_low = 1e300;
  double fabric_high = 0;
  for (const RowResult& r : results()) {
    const bool flash = r.config.kernel != "naive";
    if (!flash || r.config.problem.seq_len > 16384 || r.config.problem.heads != 8) continue;
    fabric_low = std::min(fabric_low, r.fabric_per_read);
    fabric_high = std::max(fabric_high, r.fabric_per_read);
  }
  out += fmt::format(
      "Why the L2 counts once per partition: on the FA-structured rows with N <= 16384 and H = 8 "
      "(rows 20-99), `lts__t_sectors_srcunit_ltcfabric.sum` x 32 B per DRAM byte read lies "
      "between {:.2f} and {:.2f}: about every byte read from DRAM also crosses between the two "
      "L2 partitions, so each partition holds its own copy.\n\n",
      fabric_low, fabric_high);
  out += fmt::format(
      "Rows: {}. Within ±5 %: {}; within ±10 %: {}; within ±25 %: {}; worst |error| {:.1f} %.\n\n",
      results().size(), within[0], within[1], within[2], 100 * worst);
  out +=
      "| row | kernel | dtype | H | N | d | causal | measured read + write (MB) | model read + "
      "written (MB) | error | structure vs L2 | FLOPs |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const RowResult& r : results()) {
    const AttentionProblem& p = r.config.problem;
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {:.1f} + {:.1f} | {:.1f} + {:.1f} | {} | {} | {} "
        "|\n",
        r.row, r.config.kernel, to_string(p.dtype), p.heads, p.seq_len, p.head_dim,
        p.causal ? "yes" : "no", r.measured_read / 1e6, r.measured_write / 1e6,
        r.model.read_bytes / 1e6, r.model.written_bytes / 1e6, percent(r.error), r.l2_check,
        r.flop_check);
  }
  out += "\nRows past ±25 %:\n\n";
  for (const auto& [row, reason] : known_misses())
    out += fmt::format("- row {}: {}\n", row, reason);
  return out;
}

}  // namespace

TEST_CASE("the L2-aware DRAM model is within 25 % of ncu's DRAM bytes on every row but three",
          "[l2data]") {
  // Thresholds: the issue's ±25 %; the three named rows are checked against what the table
  // says of them, so a model change that fixes or worsens them shows here too.
  for (const RowResult& r : results()) {
    INFO("row " << r.row << " " << r.config.kernel << " N=" << r.config.problem.seq_len << " error "
                << percent(r.error));
    if (known_misses().count(r.row) != 0) {
      CHECK(std::fabs(r.error) > max_error);
      CHECK(std::fabs(r.error) < 0.5);
    } else {
      CHECK(std::fabs(r.error) <= max_error);
    }
  }
}

TEST_CASE("every default-sweep shape (N <= 16384, H = 8) is within 11 %", "[l2data]") {
  // The worst is row 76 (fa2_mma d 128 N 8192, +10.3 %): a wave of 264 CTAs holds 4.1 heads of
  // 64 Q blocks; the model reads the straddled head's K/V (4 MiB) twice, the H200 kept most of it.
  for (const RowResult& r : results()) {
    if (r.config.problem.seq_len > 16384 || r.config.problem.heads != 8) continue;
    INFO("row " << r.row << " " << r.config.kernel << " error " << percent(r.error));
    CHECK(std::fabs(r.error) <= 0.11);
  }
}

TEST_CASE("docs/l2-model-errors.md is the table the model computes now", "[l2data]") {
  const std::string path = std::string(CFR_SOURCE_ROOT) + "/docs/l2-model-errors.md";
  const std::string table = table_markdown();
  // The page's second part, from its marker on, is the profiled reports'
  // (tests/evidence/test_l2_model_vs_profiles.cpp): kept as it is here.
  const std::string text = test::read_text(path);
  const std::size_t marker = text.find("<!-- profiled reports:");
  const std::string ours = marker == std::string::npos ? text : text.substr(0, marker);
  if (std::getenv("CFR_REGENERATE_L2_TABLE") != nullptr) {
    std::ofstream out(path, std::ios::binary);
    out << table;
    if (marker != std::string::npos) out << '\n' << std::string_view(text).substr(marker);
  }
  INFO(
      "stale: regenerate with CFR_REGENERATE_L2_TABLE=1 build/tests/roofline/test_roofline "
      "'[l2data]'");
  CHECK((marker == std::string::npos ? ours : ours.substr(0, ours.size() - 1)) == table);
}
