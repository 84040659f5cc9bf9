#include <catch2/catch.hpp>

#include "roofline/core/sample_validity.hpp"
#include "roofline/profile/ncu_query.hpp"
#include "roofline/profile/profile_figures.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/ncu_fixtures.hpp"
#include "tests/roofline/profiled_row.hpp"

// A profiled row's figures from its counters (profile_figures), the counters
// from ncu's CSV and metric query (fixtures/ncu/), and when samples can back
// a time. Expected values are derived by hand in the comments.

using namespace cfr;
using cfr::test::h200_cc;

TEST_CASE("profile figures of the hand-made row: levels, limiter and checks") {
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  const ResultRow row = test::profiled_row(ceiling);
  const ProfileDerived& d = row.profile->derived;
  // FLOPs: 4 B H N^2 d = 4 * 8 * 1024^2 * 64 = 2147483648; DRAM 6e6 + 2e6 B, L2 40e6 B.
  CHECK(*d.counted_flops == 2147483648.0);
  CHECK(*d.dram.bytes == 8e6);
  CHECK(*d.dram.ai == Approx(268.435456));
  CHECK(*d.l2.ai == Approx(53.6870912));
  // DRAM ridge 989.4e12 / 4800e9 = 206.1 < 268.4; L2 ridge 98.94 > 53.7 (roof 10 TB/s x 53.7).
  CHECK(*d.dram.regime == "compute-bound");
  CHECK(*d.dram.roof_TFLOPs == Approx(989.4));
  CHECK(*d.l2.regime == "memory-bound");
  CHECK(*d.l2.roof_TFLOPs == Approx(536.870912));
  CHECK(*d.dram.fraction_of_roof == Approx(row.achieved->TFLOPs / 989.4));
  // Over ncu's 50 us: DRAM 8e6 / 50e-6 / 4.8e12 = 0.0333, L2 8e11 / 1e13 = 0.08,
  // tensor 4.295e13 / 9.894e14 = 0.0434: the L2 is the limiter.
  CHECK(*d.limiter == "l2");
  CHECK(*d.limiter_fraction == Approx(0.08));
  CHECK(*d.utilizations == "dram 0.033; l2 0.080; fp16_tensor 0.043");
  // Not causal, N a multiple of Bc: every pair computed once.
  CHECK(*d.flop_ratio == 1.0);
  CHECK(*d.flop_expected_ratio == 1.0);
  CHECK(*d.flop_counter == "sm__ops_path_tensor_src_fp16.sum x 1");
  // kv_reload: Q, O 1 MiB each, K and V 16 Q blocks x 1 MiB each, LSE 32 KiB = 35684352 B.
  CHECK(row.model->traffic.bytes == 35684352.0);
  CHECK(*d.l2_model_error == Approx(35684352.0 / 40e6 - 1));
  CHECK(row.model->dram_model == TrafficModelKind::l2_aware);
  CHECK(*d.dram_model_error == Approx(*row.model->bytes_of(TrafficModelKind::l2_aware) / 8e6 - 1));
  // Median 0.0505 ms over ncu's 0.050 ms.
  CHECK(*d.timing_ratio == Approx(1.01));
}

// A plugin kernel's own count (traffic `plugin`) is of HBM bytes: it is
// checked against the DRAM counters, never against the L2's.
TEST_CASE("a kernel's own byte count is checked against DRAM, not L2") {
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  ResultRow row = test::profiled_row(ceiling);
  KernelRecord record = kernel_record(fa1_wmma_kernel, row.problem, h200_cc);
  record.traffic = TrafficModelKind::plugin;
  record.layout = nullptr;  // a plugin's: no launches for the L2-aware model
  record.own_bytes = 12e6;
  row.model = model_figures(record, row.problem, ceiling, FlopConvention::exact);
  const ProfileDerived d = profile_figures(row, ceiling, h200_cc);
  // The hand profile's DRAM bytes: 6e6 read + 2e6 written.
  CHECK(*d.dram_model_error == Approx(12e6 / 8e6 - 1));
  CHECK_FALSE(d.l2_model_error.has_value());
}

TEST_CASE("an unavailable counter leaves its figures out, never guesses them") {
  CeilingRecord ceiling = test::h200_profile_ceiling();
  ceiling.l2_bandwidth_GBps.reset();
  ResultRow row = test::profiled_row(ceiling);
  for (ProfileCounter& c : row.profile->counters) {
    if (c.metric == "sm__ops_path_tensor_src_fp16.sum") c.value.reset();
  }
  const ProfileDerived d = profile_figures(row, ceiling, h200_cc);
  CHECK_FALSE(d.counted_flops);
  CHECK_FALSE(d.flop_ratio);
  CHECK_FALSE(d.masked_work);
  // No L2 bandwidth: the L2 AI stands, its roof does not; the limiter is DRAM alone.
  CHECK(d.l2.ai);
  CHECK_FALSE(d.l2.regime);
  CHECK_FALSE(d.l2.roof_TFLOPs);
  CHECK(*d.limiter == "dram");
  CHECK(*d.utilizations == "dram 0.033");
}

TEST_CASE("a causal row's FLOP check names the diagonal blocks' masked work") {
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  ResultRow row = test::profiled_row(ceiling);
  row.problem.causal = true;
  row.model = model_figures(kernel_record(row), row.problem, ceiling, FlopConvention::exact,
                            test::h200_l2_inputs());
  // fa1_wmma d 64: 4 warps of 16 rows, Bc 32. Each 16-row group computes up to the 32-key block
  // of its last row: 64 groups, group g computes 32 * (floor((16g + 15) / 32) + 1) keys per row.
  double computed = 0;
  for (int g = 0; g < 64; ++g) computed += 16.0 * 32 * ((16 * g + 15) / 32 + 1);
  const double unmasked = 1024.0 * 1025 / 2;
  const ProfileDerived d = profile_figures(row, ceiling, h200_cc);
  CHECK(*d.flop_expected_ratio == Approx(computed / unmasked));
  CHECK(d.masked_work->starts_with("diagonal blocks: 16-row groups x 32-key blocks"));
}

TEST_CASE("mask rows: a warp's rows for tensor kernels, Br for SIMT ones, 0 for a library GEMM") {
  CHECK(*mask_rows("fa1_wmma", {64, 32}, 64, h200_cc) == 16);   // 4 warps over Br 64
  CHECK(*mask_rows("fa2_mma", {256, 64}, 128, h200_cc) == 32);  // 8 warps over Br 256
  CHECK(*mask_rows("fa1_scalar", {64, 64}, 64, h200_cc) == 64);
  CHECK(*mask_rows("naive", {}, 64, h200_cc) == 0);
  CHECK_FALSE(mask_rows("torch_sdpa_flash", {}, 64, h200_cc));
}

TEST_CASE("ncu --query-metrics output: base names, with and without a section prefix") {
  const ncu::MetricNames names =
      ncu::parse_query_metrics(test::read_fixture("query-metrics-gh100.txt"));
  // The recording (fixtures/ncu/README.md) was cut before the "why" counters
  // of issue 23 were asked for (every metric after the first 11): their
  // lines arrive with the next `ncuprobe` recording. Every earlier metric,
  // and sm__cycles_elapsed.avg's base, is in it.
  const std::vector<std::string> all = profile_metrics();
  REQUIRE(all[10] == "sm__cycles_elapsed.avg");
  for (std::size_t i = 0; i <= 10; ++i) {
    INFO(all[i]);
    CHECK(ncu::chip_has(names, all[i]));
  }
  CHECK(names.contains("sm__ops_path_tensor_src_fp8"));
  CHECK_FALSE(names.contains("Metric"));
  CHECK_FALSE(names.contains("Chip"));
  // The example name is not a gh100 metric.
  CHECK_FALSE(ncu::chip_has(names, "sm__ops_path_tensor_src_fp16_dst_fp32.sum"));
  CHECK(ncu::metric_base("sm__cycles_elapsed.avg.per_second") == "sm__cycles_elapsed");
}

TEST_CASE("counters of a recorded row: values, and why a metric has none") {
  const auto rows = ncu::group_rows(ncu::parse_raw_csv(test::read_fixture("l2data.csv")));
  const ncu::MetricNames chip =
      ncu::parse_query_metrics(test::read_fixture("query-metrics-gh100.txt"));
  // Row 64 is fa2_mma fp16 B 1 H 8 N 4096 d 64, not causal (l2data-configs.txt line 65).
  const std::vector<ProfileCounter> counters = profile_counters(rows.at(64), chip);
  REQUIRE(counters.size() == profile_metrics().size());
  Profile profile;
  profile.counters = counters;
  CHECK(*profile.value("gpu__time_duration.sum") > 0);
  CHECK(profile.counter("dram__bytes_read.sum")->unit == "byte");
  // The recording did not ask for bank conflicts.
  const ProfileCounter* conflicts =
      profile.counter("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum");
  CHECK_FALSE(conflicts->value);
  CHECK(conflicts->note == "absent from ncu's CSV");
  for (const ProfileCounter& c : profile_counters(rows.at(64), {})) {
    CHECK(c.note == "not on this chip (ncu --query-metrics)");
  }

  // Its figures: the tensor pipe counts the model's FLOPs exactly (not causal).
  const CeilingRecord ceiling = test::h200_profile_ceiling();
  ResultRow row = model_row(fa2_mma_kernel, {1, 8, 4096, 64, false, DType::fp16}, ceiling,
                            FlopConvention::exact, h200_cc, test::h200_l2_inputs());
  row.profile = profile;
  const ProfileDerived d = profile_figures(row, ceiling, h200_cc);
  CHECK(*d.flop_ratio == Approx(1.0).epsilon(1e-6));
  CHECK(*d.dram_model_error == Approx(0).margin(0.25));  // the target
  CHECK_FALSE(d.timing_ratio);                           // no timing in this row
}

TEST_CASE("why ncu read no counters, from its output") {
  CHECK(ncu::counters_unavailable_reason(
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
            "Performance Counters on the target device 0.")
            ->find("ERR_NVGPUCTRPERM") != std::string::npos);
  CHECK_FALSE(ncu::counters_unavailable_reason("==PROF== Disconnected from process 42"));
}

TEST_CASE("samples back a time only when one is above 0 ms") {
  CHECK_FALSE(unusable_samples_reason({0.5, 0.51}, std::nullopt));
  CHECK(*unusable_samples_reason({0, 0, 0}, std::nullopt) ==
        "all 3 samples are 0 ms: the events around the launches measured nothing");
  CHECK(*unusable_samples_reason({}, std::string("CUDA_INJECTION64_PATH=/opt/ncu/inj.so")) ==
        "no samples: timing under an external profiler (CUDA_INJECTION64_PATH=/opt/ncu/inj.so) "
        "is not a measurement");
  CHECK(*external_profiler({"HOME=/root", "CUDA_INJECTION64_PATH=/x.so"}) ==
        "CUDA_INJECTION64_PATH=/x.so");
  CHECK(*external_profiler({"NSYS_PROFILING_SESSION_ID=3"}) == "NSYS_PROFILING_SESSION_ID=3");
  CHECK_FALSE(external_profiler({"HOME=/root", "PATH=/usr/bin"}));
}
