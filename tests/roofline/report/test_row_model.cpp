#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>

#include "roofline/core/statistics.hpp"
#include "roofline/model/l2_traffic_model.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/a100_ceiling.hpp"
#include "tests/roofline/seed_shape.hpp"
#include "tests/shipped_gpus.hpp"

using namespace cfr;

TEST_CASE("a row takes Br, Bc and the compute unit from the kernel's own description") {
  const ResultRow scalar =
      model_row(fa1_scalar_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  CHECK(scalar.tile == TileShape{64, 64});
  CHECK(scalar.compute_unit == ComputeUnit::fp32_simt);  // judged against the SIMT roof
  CHECK(scalar.model->roofline->ridge == Approx(19.5e12 / 2039e9));
  CHECK(scalar.model->traffic.bytes == 8624013312.0);

  AttentionProblem d128 = seed_shape();
  d128.head_dim = 128;
  const ResultRow wmma = model_row(fa1_wmma_kernel, d128, a100_ceiling(), FlopConvention::exact);
  CHECK(wmma.tile == TileShape{32, 32});
  CHECK(wmma.compute_unit == ComputeUnit::fp16_tensor);
  AttentionProblem bf16 = seed_shape();
  bf16.dtype = DType::bf16;
  CHECK(model_row(fa1_wmma_kernel, bf16, a100_ceiling(), FlopConvention::exact).compute_unit ==
        ComputeUnit::bf16_tensor);
}

TEST_CASE("unsupported dtype or a missing peak skips the row with a reason") {
  AttentionProblem fp32 = seed_shape();
  fp32.dtype = DType::fp32;
  const ResultRow row = model_row(fa1_wmma_kernel, fp32, a100_ceiling(), FlopConvention::exact);
  CHECK(row.status == RowStatus::skipped);
  CHECK(row.reason == "fa1_wmma has no fp32 variant");

  CeilingRecord volta = a100_ceiling();
  volta.gpu = "v100";
  volta.peak_TFLOPs[static_cast<std::size_t>(ComputeUnit::bf16_tensor)].reset();
  AttentionProblem bf16 = seed_shape();
  bf16.dtype = DType::bf16;
  const ResultRow no_peak = model_row(fa1_wmma_kernel, bf16, volta, FlopConvention::exact);
  CHECK(no_peak.status == RowStatus::skipped);
  CHECK(no_peak.reason == "ceiling v100 has no bf16_tensor peak");
}

// fa1_wmma's cp.async and bf16 WMMA need sm_80 (roofline/model/kernel_catalog.hpp);
// the V100's 7.0 comes from configs/gpus.json.
TEST_CASE("a row on a GPU older than the kernel's minimum compute capability is skipped") {
  const ResultRow volta = model_row(fa1_wmma_kernel, seed_shape(), a100_ceiling(),
                                    FlopConvention::exact, ComputeCapability{7, 0});
  CHECK(volta.status == RowStatus::skipped);
  CHECK(volta.reason == "fa1_wmma needs compute capability 8.0 or newer; this GPU has 7.0");
  CHECK(!volta.model);  // no model figures for a row that cannot run

  CHECK(model_row(fa1_wmma_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact,
                  ComputeCapability{8, 0})
            .status == RowStatus::ok);
  CHECK(model_row(fa1_scalar_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact,
                  ComputeCapability{7, 0})
            .status == RowStatus::ok);
  // A dtype the kernel lacks is the first reason given.
  AttentionProblem fp32 = seed_shape();
  fp32.dtype = DType::fp32;
  CHECK(model_row(fa1_wmma_kernel, fp32, a100_ceiling(), FlopConvention::exact,
                  ComputeCapability{7, 0})
            .reason == "fa1_wmma has no fp32 variant");
}

TEST_CASE("a shape whose grid is longer than CUDA allows on an axis is skipped, not launched") {
  // gridDim.y and .z hold at most 65535 blocks. fa2_mma launches (heads, batch, Q blocks) on
  // (x, y, z), the FA1 kernels (Q blocks, heads, batch).
  AttentionProblem wide{65536, 1, 128, 64, false, DType::fp16};
  const ResultRow fa2 = model_row(fa2_mma_kernel, wide, a100_ceiling(), FlopConvention::exact);
  CHECK(fa2.status == RowStatus::skipped);
  CHECK(fa2.reason ==
        "fa2_mma's forward launch puts batch on blockIdx.y: 65536 blocks, above CUDA's 65535");
  CHECK(model_row(fa1_wmma_kernel, wide, a100_ceiling(), FlopConvention::exact).status ==
        RowStatus::skipped);  // batch on z
  wide.batch = 65535;
  CHECK(model_row(fa2_mma_kernel, wide, a100_ceiling(), FlopConvention::exact).status ==
        RowStatus::ok);

  // 65536 heads fit fa2_mma's x, not the FA1 kernels' y (the backward's two launches too).
  const AttentionProblem many_heads{1, 65536, 128, 64, false, DType::fp16};
  CHECK(model_row(fa2_mma_kernel, many_heads, a100_ceiling(), FlopConvention::exact).status ==
        RowStatus::ok);
  const ResultRow bwd =
      model_row(fa1_backward_kernel, many_heads, a100_ceiling(), FlopConvention::exact);
  CHECK(bwd.reason ==
        "fa1_bwd's dK dV launch puts heads on blockIdx.y: 65536 blocks, above CUDA's 65535");
  // The materialized path has no tiled launch: cuBLAS sizes its own grids.
  CHECK(model_row(naive_kernel, many_heads, a100_ceiling(), FlopConvention::exact).status ==
        RowStatus::ok);
}

TEST_CASE("blocks_along counts a ragged last block") {
  // N = 1000 over Br = 128: 7 full blocks and one of 104 rows.
  CHECK(blocks_along(GridAxis::q_blocks, 2, 8, 1000, {128, 64}) == 8);
  CHECK(blocks_along(GridAxis::kv_blocks, 2, 8, 1000, {128, 64}) == 16);
  CHECK(blocks_along(GridAxis::heads, 2, 8, 1000, {128, 64}) == 8);
  CHECK(blocks_along(GridAxis::batch, 2, 8, 1000, {128, 64}) == 2);
}

TEST_CASE("achieved figures are model counts over the measured median") {
  ResultRow row = model_row(fa1_scalar_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  row.timing = Timing{};
  row.timing->samples_ms = {10, 12, 11};
  row.timing->summary = summarize(row.timing->samples_ms);
  CHECK(row.timing->summary.median == 11);
  const Achieved a = achieved_figures(*row.model, row.timing->summary.median, a100_ceiling());
  CHECK(a.TFLOPs == Approx(549755813888.0 / 0.011 / 1e12));
  CHECK(a.bandwidth_GBps == Approx(8624013312.0 / 0.011 / 1e9));
  CHECK(a.bandwidth_utilization == Approx(a.bandwidth_GBps / 2039));
  CHECK(a.fraction_of_roof == Approx(a.TFLOPs / row.model->roofline->roof_TFLOPs));
}

TEST_CASE("model_figures gives the bytes of every traffic model that applies, and the roofline") {
  // Seed shape, fa1_scalar (kv_reload, 64x64) on the A100 datasheet: compulsory Q, K, V, O once
  // = 4 x 8 heads x 16384 x 64 x 2 B = 67,108,864 B; kv_reload 8,624,013,312 B
  // (test_traffic_model.cpp); 549,755,813,888 FLOP.
  const KernelRecord scalar = kernel_record(fa1_scalar_kernel, seed_shape());
  CHECK(scalar == KernelRecord{Direction::forward,
                               TrafficModelKind::kv_reload,
                               {64, 64},
                               ComputeUnit::fp32_simt,
                               find_kernel("fa1_scalar")});
  const ModelFigures m = model_figures(scalar, seed_shape(), a100_ceiling(), FlopConvention::exact);
  CHECK(m.bytes_of(TrafficModelKind::compulsory) == 67108864.0);
  CHECK(m.bytes_of(TrafficModelKind::kv_reload) == 8624013312.0);
  CHECK_FALSE(m.bytes_of(TrafficModelKind::materialized).has_value());
  CHECK(m.dram_model == TrafficModelKind::kv_reload);
  CHECK(m.ai == 549755813888.0 / 8624013312.0);
  CHECK(m.roofline->ridge == ridge(19.5, 2039));
  // model_row is this record's model_figures.
  const ResultRow row =
      model_row(fa1_scalar_kernel, seed_shape(), a100_ceiling(), FlopConvention::exact);
  CHECK(row.model->ai == m.ai);
  CHECK(kernel_record(row) == scalar);

  // A peer kernel the catalog does not know: the compulsory model, no tile.
  const KernelRecord peer{
      Direction::forward, TrafficModelKind::compulsory, {}, ComputeUnit::fp16_tensor};
  const ModelFigures p = model_figures(peer, seed_shape(), a100_ceiling(), FlopConvention::exact);
  CHECK(p.bytes_by_model.size() == 1);
  CHECK(p.traffic.bytes == 67108864.0);
  CHECK(p.roofline->ridge == ridge(312, 2039));
  // kv_reload needs the tile the peer does not have.
  const KernelRecord untiled{
      Direction::forward, TrafficModelKind::kv_reload, {}, ComputeUnit::fp16_tensor};
  CHECK_THROWS_AS(model_figures(untiled, seed_shape(), a100_ceiling(), FlopConvention::exact),
                  std::invalid_argument);
}

TEST_CASE("with the GPU's L2 figures the L2-aware model is the DRAM model of a built-in kernel") {
  // fa2_mma on an H200 (60 MiB L2, 2 partitions, 132 SMs): the bytes are flash_forward_dram's
  // with the registry's tile, resident CTAs and launch order; AI and the roof use them.
  const AttentionProblem p{1, 8, 4096, 64, false, DType::fp16};
  const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};
  const ResultRow row = model_row(fa2_mma_kernel, p, a100_ceiling(), FlopConvention::exact,
                                  ComputeCapability{9, 0}, h200);
  REQUIRE(row.model);
  const LaunchGeometry geometry{
      {128, 64}, 2, 132, blocks_fastest, CausalBlockOrder::heaviest_first};
  const double expected = flash_forward_dram(p, geometry, {62914560, 2}).bytes();
  CHECK(row.model->dram_model == TrafficModelKind::l2_aware);
  CHECK(*row.model->bytes_of(TrafficModelKind::l2_aware) == expected);
  CHECK(row.model->dram_bytes() == expected);
  CHECK(row.model->ai == row.model->flops.counted() / expected);
  CHECK(row.model->l2_inputs == h200);
  // The kernel's own model is kept: kv_reload bytes in traffic.bytes and by_model.
  CHECK(row.model->traffic.model == TrafficModelKind::kv_reload);
  CHECK(*row.model->bytes_of(TrafficModelKind::kv_reload) == row.model->traffic.bytes);

  // A kernel the catalog does not know has no launches to simulate: its own model stays.
  const KernelRecord peer{
      Direction::forward, TrafficModelKind::compulsory, {}, ComputeUnit::fp16_tensor};
  const ModelFigures m = model_figures(peer, p, a100_ceiling(), FlopConvention::exact, h200);
  CHECK(m.dram_model == TrafficModelKind::compulsory);
  CHECK_FALSE(m.l2_inputs);
  CHECK_FALSE(m.bytes_of(TrafficModelKind::l2_aware));
}

TEST_CASE(
    "a row carries the L2-aware interval, its AI interval and the verdict against the ridge") {
  // fa1_wmma at H 4, N 131072, d 128, causal on an H200: K/V of one head (64 MiB) outgrow the
  // L2, so the bounding schedules differ from the point.
  const AttentionProblem p{1, 4, 131072, 128, true, DType::fp16};
  const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};
  const KernelRecord record = kernel_record(fa1_wmma_kernel, p, ComputeCapability{9, 0});
  const ModelFigures m = model_figures(record, p, a100_ceiling(), FlopConvention::exact, h200);
  REQUIRE(m.dram_interval);
  const auto interval = l2_aware_interval(fa1_wmma_kernel, p, h200);
  REQUIRE(interval);
  CHECK(*m.dram_interval == *interval);
  CHECK(m.dram_interval->low <= m.dram_bytes());
  CHECK(m.dram_bytes() <= m.dram_interval->high);
  CHECK(m.dram_interval->low < m.dram_interval->high);
  CHECK(*m.ai_low == m.flops.counted() / m.dram_interval->high);
  CHECK(*m.ai_high == m.flops.counted() / m.dram_interval->low);
  REQUIRE(m.roofline);
  REQUIRE(m.interval_regime);
  CHECK(*m.interval_regime == judge_interval(*m.ai_low, *m.ai_high, m.roofline->ridge));

  // The verdict against ridges placed below, inside and above the AI interval (the
  // ceiling's peak moves the ridge; the bytes stay).
  const double bandwidth = a100_ceiling().bandwidth_GBps;
  const auto verdict_at_ridge = [&](double ridge_ai) {
    CeilingRecord c = a100_ceiling();
    for (auto& peak : c.peak_TFLOPs) peak = ridge_ai * bandwidth * 1e9 / 1e12;
    return model_figures(record, p, c, FlopConvention::exact, h200).interval_regime;
  };
  CHECK(verdict_at_ridge(*m.ai_low * 0.9) == IntervalRegime::compute_bound);
  CHECK(verdict_at_ridge(std::sqrt(*m.ai_low * *m.ai_high)) == IntervalRegime::uncertain);
  CHECK(verdict_at_ridge(*m.ai_high * 1.1) == IntervalRegime::memory_bound);

  // Without the L2-aware model there is no interval and no interval verdict.
  const ModelFigures own = model_figures(record, p, a100_ceiling(), FlopConvention::exact);
  CHECK_FALSE(own.dram_interval);
  CHECK_FALSE(own.ai_low);
  CHECK_FALSE(own.interval_regime);
}

TEST_CASE("the L2-aware model's limits through the row: a huge L2 is the compulsory floor") {
  // Every byte read once and written once when the whole problem fits: Q, K, V, O plus LSE.
  const AttentionProblem p{1, 8, 4096, 64, false, DType::fp16};
  const L2ModelInputs huge{1e12, 2, 132, {9, 0}, "test"};
  const ModelFigures m = model_figures(kernel_record(fa1_wmma_kernel, p, ComputeCapability{9, 0}),
                                       p, a100_ceiling(), FlopConvention::exact, huge);
  CHECK(m.dram_bytes() <= m.traffic.compulsory_bytes + 8 * 4096 * 4);  // + LSE
  const L2ModelInputs tiny{1, 1, 132, {9, 0}, "test"};
  const ModelFigures t = model_figures(kernel_record(fa1_wmma_kernel, p, ComputeCapability{9, 0}),
                                       p, a100_ceiling(), FlopConvention::exact, tiny);
  CHECK(t.dram_bytes() == Approx(m.traffic.bytes).epsilon(0.05));  // kv_reload
}

namespace {

// The H200 as `ceilings` would measure it: the copy kernel's 3935 GB/s
// (results/h200/ceilings.json), a read stream above it, the best peaks.
CeilingRecord h200_measured(std::optional<double> read_GBps) {
  CeilingRecord c;
  c.gpu = "h200";
  c.source = "measured";
  c.bandwidth_GBps = 3935;
  c.read_bandwidth_GBps = read_GBps;
  c.peak_TFLOPs = {60.2, 130.8, 768.6, 802.1};
  return c;
}

// Llama 3 8B's decoding step: 32 query heads over 8 K/V heads, d 128, one token.
AttentionProblem decode_step() {
  AttentionProblem p{8, 32, 1, 128, false, DType::fp16};
  p.kv_len = 32768;
  p.kv_heads = 8;
  return p;
}

}  // namespace

TEST_CASE("only a read-stream kernel (split_kv) is judged on the read roof, where there is one") {
  const CeilingRecord with_read = h200_measured(4600);
  const CeilingRecord without_read = h200_measured(std::nullopt);
  for (TrafficModelKind kind :
       {TrafficModelKind::compulsory, TrafficModelKind::materialized, TrafficModelKind::kv_reload,
        TrafficModelKind::fa1_backward, TrafficModelKind::l2_aware, TrafficModelKind::plugin}) {
    INFO(to_string(kind));
    CHECK(memory_roof(kind, with_read) == MemoryRoof::dram);
  }
  CHECK(memory_roof(TrafficModelKind::split_kv, with_read) == MemoryRoof::dram_read);
  CHECK(memory_roof(TrafficModelKind::split_kv, without_read) == MemoryRoof::dram);
  CHECK(with_read.bandwidth(MemoryRoof::dram_read) == 4600);
  CHECK(with_read.bandwidth(MemoryRoof::dram) == 3935);
  CHECK(without_read.bandwidth(MemoryRoof::dram_read) == 3935);
}

TEST_CASE("a decode row's roof is min(peak, read bandwidth x AI); its % BW is of the read stream") {
  // AI about 4 FLOP/B (docs/model.md §7), far left of either ridge: the roof is the slope.
  const ResultRow row =
      model_row(fa2_decode_kernel, decode_step(), h200_measured(4600), FlopConvention::exact);
  REQUIRE(row.status == RowStatus::ok);
  const ModelFigures& m = *row.model;
  CHECK(m.memory_roof == MemoryRoof::dram_read);
  CHECK(m.ai == Approx(4.0).epsilon(0.01));
  CHECK(m.roofline->ridge == ridge(768.6, 4600));
  CHECK(m.roofline->roof_TFLOPs == Approx(4600e9 * m.ai / 1e12));
  CHECK(m.roofline->roof_time_ms == Approx(m.dram_bytes() / 4600e9 * 1e3));
  const Achieved a = achieved_figures(m, 0.25, h200_measured(4600));
  CHECK(a.bandwidth_utilization == Approx(m.dram_bytes() / 0.25e-3 / 1e9 / 4600));

  // Without a read figure (a datasheet ceiling, a ceilings file from before it): the copy's.
  const ResultRow copy = model_row(fa2_decode_kernel, decode_step(), h200_measured(std::nullopt),
                                   FlopConvention::exact);
  CHECK(copy.model->memory_roof == MemoryRoof::dram);
  CHECK(copy.model->roofline->ridge == ridge(768.6, 3935));
  CHECK(copy.model->roofline->roof_TFLOPs == Approx(3935e9 * m.ai / 1e12));
}

TEST_CASE("kv_reload rows keep the copy's roof, square ones bit-identical with a read figure") {
  // fa2_mma on the decode step streams K/V too, but its model (kv_reload) writes O per Q block
  // row and describes square prefill, where O is a quarter of the compulsory bytes.
  const ResultRow decode_mma =
      model_row(fa2_mma_kernel, decode_step(), h200_measured(4600), FlopConvention::exact);
  CHECK(decode_mma.model->memory_roof == MemoryRoof::dram);
  CHECK(decode_mma.model->roofline->ridge == ridge(768.6, 3935));
  for (const KernelDescription& kernel : kernel_catalog) {
    if (kernel.traffic == TrafficModelKind::split_kv) continue;
    INFO(kernel.name);
    const AttentionProblem square{1, 8, 4096, 64, true, DType::fp16};
    const ResultRow before =
        model_row(kernel, square, h200_measured(std::nullopt), FlopConvention::exact);
    const ResultRow after = model_row(kernel, square, h200_measured(4600), FlopConvention::exact);
    REQUIRE(before.model.has_value() == after.model.has_value());
    if (!before.model || !before.model->roofline) continue;
    CHECK(after.model->memory_roof == MemoryRoof::dram);
    CHECK(after.model->roofline->ridge == before.model->roofline->ridge);
    CHECK(after.model->roofline->roof_TFLOPs == before.model->roofline->roof_TFLOPs);
    CHECK(after.model->roofline->roof_time_ms == before.model->roofline->roof_time_ms);
    CHECK(achieved_figures(*after.model, 1.0, h200_measured(4600)).bandwidth_utilization ==
          achieved_figures(*before.model, 1.0, h200_measured(std::nullopt)).bandwidth_utilization);
  }
}

TEST_CASE("a row records the kernel revision it ran where the catalog lists earlier ones") {
  const AttentionProblem p{1, 8, 8192, 64, false, DType::fp16};
  const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};
  const auto row_of = [&](const KernelDescription& kernel) {
    return model_row(kernel, p, a100_ceiling(), FlopConvention::exact, ComputeCapability{9, 0},
                     h200);
  };
  ResultRow fa3 = row_of(fa3_wgmma_kernel);
  CHECK(fa3.kernel_revision == 8);
  CHECK(kernel_record(fa3).layout == find_kernel("fa3_wgmma"));
  // Today's revision streams 192-key blocks at d 64 N 8192 without a mask, revision 5 128-key ones.
  ResultRow v5 = row_of(fa3_wgmma_v5_kernel);
  CHECK(v5.kernel_revision == 5);
  CHECK(kernel_record(v5).layout == &fa3_wgmma_v5_kernel);
  CHECK(fa3.tile == TileShape{128, 192});
  CHECK(v5.tile == TileShape{128, 128});
  // The model of revision 4 is its launches', and a row without a revision is read as it.
  ResultRow v4 = row_of(fa3_wgmma_v4_kernel);
  CHECK(v4.kernel_revision == 4);
  CHECK(kernel_record(v4).layout == &fa3_wgmma_v4_kernel);
  v4.kernel_revision.reset();
  CHECK(kernel_record(v4).layout == &fa3_wgmma_v4_kernel);
  CHECK(*v4.model->bytes_of(TrafficModelKind::l2_aware) !=
        *fa3.model->bytes_of(TrafficModelKind::l2_aware));
  CHECK(catalog_revision("fa3_wgmma", 3) == nullptr);
  CHECK(catalog_revision("torch_sdpa_flash", std::nullopt) == nullptr);
  // A kernel with one revision writes none.
  CHECK_FALSE(row_of(fa2_mma_kernel).kernel_revision);
  CHECK(catalog_revision("fa2_mma", std::nullopt) == find_kernel("fa2_mma"));
}

TEST_CASE(
    "a sweep's L2 inputs: the device's L2, the loop kept whole from the table row it matches") {
  const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "t");
  DeviceRecord h100;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc = "9.0";
  h100.sm_count = 132;
  h100.l2_bytes = 52428800;
  const L2ModelInputs matched = l2_model_inputs(h100, table.match_device(h100.name, h100.cc));
  CHECK(matched.l2_bytes == h100.l2_bytes);
  CHECK(matched.source == "device 0");
  CHECK(matched.loop_kept_bytes == table.find("h100")->l2_loop_kept_bytes->value);
  CHECK(matched.loop_kept_source.rfind("GPU table h100: results/h100/l2-loop-", 0) == 0);

  DeviceRecord unknown = h100;
  unknown.name = "NVIDIA Made-Up 9000";
  const L2ModelInputs alone =
      l2_model_inputs(unknown, table.match_device(unknown.name, unknown.cc));
  CHECK(alone.loop_kept_bytes == 0);
  CHECK(alone.loop_kept_source.empty());
  CHECK(l2_model_inputs(*table.find("h100")).loop_kept_bytes == matched.loop_kept_bytes);
  CHECK(l2_model_inputs(*table.find("a100")).loop_kept_bytes == 0);
}
