// sweep --profile's host half (app/profile_run.cpp) against a stand-in for
// ncu: a shell script that answers --version, prints the recorded metric
// query and, for the profiling run, the recorded raw CSV of
// tests/roofline/fixtures/ncu/. No GPU: the child it would run is never run.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "app/child_process.hpp"
#include "app/profile_rows.hpp"
#include "app/profile_run.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/profiled_row.hpp"
#include "tests/shipped_gpus.hpp"

using namespace cfr;
using namespace cfr::app;
namespace fs = std::filesystem;

namespace {

const std::string fixtures = std::string(CFR_SOURCE_ROOT) + "/tests/roofline/fixtures/ncu";

// A temporary folder holding an executable script named ncu.
class FakeNcu {
 public:
  explicit FakeNcu(const std::string& body)
      : dir_(fs::temp_directory_path() / fmt::format("cfr-fake-ncu-{}", ::getpid())) {
    fs::create_directories(dir_);
    std::ofstream(path()) << "#!/bin/sh\n" << body;
    fs::permissions(path(), fs::perms::owner_all);
  }
  ~FakeNcu() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string path() const { return (dir_ / "ncu").string(); }

 private:
  fs::path dir_;
};

const std::string recording_ncu = fmt::format(
    "case \"$1\" in\n"
    "  --version) echo 'NVIDIA (R) Nsight Compute Command Line Profiler'; "
    "echo 'Version 2025.3.1.0 (stand-in)';;\n"
    "  --query-metrics) cat '{0}/query-metrics-gh100.txt';;\n"
    "  *) cat '{0}/l2data.csv';;\n"
    "esac\n",
    fixtures);

// The shipped GPU table, configs/gpus.json, as the sweep loads it.
const GpuTable& shipped_gpus() {
  static const GpuTable table = parse_gpu_table(test::shipped_gpu_table(), "configs/gpus.json");
  return table;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rows 0 (naive, N 1024, d 64) and 64 (fa2_mma, N 4096, d 64) of the recording ok, the rows
// between skipped, and an ok row 65 with no range in the recording... beyond it: row 200.
Report report_of_recorded_rows() {
  Report r;
  r.ceiling = test::h200_profile_ceiling();
  r.devices.push_back(test::h200_device());
  const L2ModelInputs l2 = l2_model_inputs(r.devices.front());
  for (int i = 0; i <= 200; ++i) {
    const bool fa2 = i >= 64;
    const AttentionProblem p{1, 8, fa2 ? 4096 : 1024, 64, false, DType::fp16};
    ResultRow row = model_row(fa2 ? fa2_mma_kernel : naive_kernel, p, r.ceiling,
                              FlopConvention::exact, ComputeCapability{9, 0}, l2);
    row.device = 0;
    if (i != 0 && i != 64 && i != 200) {
      row.status = RowStatus::skipped;
      row.reason = "not in this test";
    }
    r.results.push_back(row);
  }
  return r;
}

}  // namespace

TEST_CASE("profile: every ok row gets its recorded counters and figures, or why not") {
  const FakeNcu ncu(recording_ncu);
  Report report = report_of_recorded_rows();
  const std::string line = profile_report(
      report, {.enabled = true, .ncu = ncu.path(), .plugins = {}}, shipped_gpus(), 7);
  INFO(line);
  CHECK(line.starts_with("profile: 2 of 3 rows profiled by Version 2025.3.1.0 (stand-in)"));
  for (std::size_t i : {0u, 64u}) {
    const Profile& p = *report.results[i].profile;
    CHECK(p.collected());
    CHECK(p.tool == "Nsight Compute");
    CHECK(p.command.starts_with(ncu.path() + " --csv --page raw --print-units base"));
    CHECK(p.command.find(" profile-child --rows ") != std::string::npos);
    CHECK(p.value("dram__bytes_read.sum").value_or(0) > 0);
    CHECK(p.derived.dram.ai.has_value());
    CHECK(*p.derived.flop_ratio == Approx(1).epsilon(1e-6));  // not causal: the model's FLOPs
  }
  CHECK_FALSE(report.results[1].profile);  // skipped rows are not profiled
  const Profile& missing = *report.results[200].profile;
  CHECK(missing.unavailable == "no launches in NVTX range cfr_row_200 of ncu's CSV (ncu exit 0)");
  CHECK(missing.counters.empty());
}

TEST_CASE("profile: the child's own timing of each row reaches the row, with the sweep's timer") {
  // The stand-in writes what profile-child --timing-out would: rows 0 and 64 timed in the
  // profiled process, and the floor of three empty kernels on device 0; its CSV then gets
  // row 0's three kernel records again in the floor's range, cfr_floor_3 (device 0 x 1000 +
  // 3 kernels), as if they were the floor's profiled launch.
  const std::string timing_json =
      R"({"rows":[{"index":0,"samples_ms":[0.100,0.101,0.102],"sm_clock_MHz":1980,)"
      R"("stream_blocked":false},{"index":64,"samples_ms":[0.5],"sm_clock_MHz":1900,)"
      R"("stream_blocked":true}],"floors":[{"device":0,"kernels":3,"samples_ms":[0.01],)"
      R"("sm_clock_MHz":1500,"stream_blocked":false}]})";
  const FakeNcu ncu(fmt::format(
      "case \"$1\" in --version|--query-metrics) ;; *)\n"
      "  out=; prev=; for a in \"$@\"; do [ \"$prev\" = --timing-out ] && out=$a; prev=$a; done\n"
      "  printf '%s' '{}' > \"$out\";;\nesac\n{}"
      "case \"$1\" in --version|--query-metrics) ;; *)\n"
      "  grep 'cfr_row_0:' '{}/l2data.csv' | sed 's/cfr_row_0:/cfr_floor_3:/';;\nesac\n",
      timing_json, recording_ncu, fixtures));
  Report report = report_of_recorded_rows();
  ProfileOptions options{.enabled = true, .ncu = ncu.path(), .plugins = {}};
  options.timer.warmup = 2;
  options.timer.l2_flush = "none";
  profile_report(report, options, shipped_gpus(), 7);
  const Profile& naive = *report.results[0].profile;
  CHECK(naive.command.find(" --time-samples 10 --time-warmup 2 --time-max-seconds 2 "
                           "--time-max-noise 0.5 --time-throttle 75 --time-l2-flush none "
                           "--timing-out ") != std::string::npos);
  REQUIRE(naive.process_timing);
  CHECK(naive.process_timing->samples_ms == std::vector<double>{0.100, 0.101, 0.102});
  CHECK_FALSE(naive.process_timing->stream_blocked);
  CHECK(*naive.derived.process_cycles == Approx(0.101 * 1980e3));
  // naive's recorded launch has three kernels: the floor of three, with ncu's duration of the
  // floor's one profiled launch (row 0's three kernels' sum); fa2_mma's one kernel has none.
  REQUIRE(naive.timer_floor);
  CHECK(naive.timer_floor->kernels == 3);
  CHECK(naive.timer_floor->events.samples_ms == std::vector<double>{0.01});
  REQUIRE(naive.timer_floor->ncu_ns.size() == 1);
  CHECK(naive.timer_floor->ncu_ns[0] == naive.value("gpu__time_duration.sum"));
  CHECK_FALSE(report.results[64].profile->timer_floor);
  // The recording predates sm__cycles_elapsed.avg: no check of the timer alone.
  CHECK_FALSE(naive.derived.process_cycle_ratio);
  REQUIRE(report.results[64].profile->process_timing);
  CHECK(report.results[64].profile->process_timing->sm_clock_MHz == 1900);

  // --profile-time-samples 0: the child is not asked to time.
  Report untimed = report_of_recorded_rows();
  options.time_samples = 0;
  profile_report(untimed, options, shipped_gpus(), 7);
  CHECK(untimed.results[0].profile->command.find("--time-samples") == std::string::npos);
  CHECK_FALSE(untimed.results[0].profile->process_timing);
}

TEST_CASE("profile: without ncu, or without permission for the counters, rows say so") {
  Report report = report_of_recorded_rows();
  const std::string line = profile_report(
      report, {.enabled = true, .ncu = "/nonexistent/ncu", .plugins = {}}, shipped_gpus(), 7);
  CHECK(line ==
        "profile: ncu not found: '/nonexistent/ncu' is not an executable (--ncu PATH names it)");
  CHECK(report.results[0].profile->unavailable == line.substr(9));
  CHECK(report.results[64].profile->counters.empty());

  // ncu's own words when the driver refuses the counters (NVIDIA's ERR_NVGPUCTRPERM page).
  const FakeNcu refused(
      "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA "
      "GPU Performance Counters on the target device 0.'\nexit 1\n");
  Report refused_report = report_of_recorded_rows();
  profile_report(refused_report, {.enabled = true, .ncu = refused.path(), .plugins = {}},
                 shipped_gpus(), 7);
  CHECK(refused_report.results[0].profile->unavailable.starts_with(
      "no permission to read the GPU's performance counters (ncu: ERR_NVGPUCTRPERM"));
}

TEST_CASE("profile rows: the child's input round-trips, and a bad line is named") {
  const std::vector<ProfileRow> rows{{3, "fa1_wmma", {1, 8, 4096, 64, true, DType::bf16}, 1}};
  CHECK(format_profile_rows(rows) == "3 fa1_wmma bf16 1 8 4096 64 1 1 4096 8 0\n");
  const std::vector<ProfileRow> back = parse_profile_rows(format_profile_rows(rows));
  REQUIRE(back.size() == 1);
  CHECK(back[0].index == 3);
  CHECK(back[0].problem == rows[0].problem);
  CHECK(back[0].device == 1);
  CHECK_THROWS_WITH(parse_profile_rows("3 fa1_wmma fp8 1 8 4096 64 1 0 4096 8 0\n"),
                    "profile rows, line 1: not a row: '3 fa1_wmma fp8 1 8 4096 64 1 0 4096 8 0'");
  // Without its keys, K/V heads and page size a row is not one (the child
  // would launch a square shape in its place).
  CHECK_THROWS(parse_profile_rows("3 fa1_wmma bf16 1 8 4096 64 1 0\n"));

  // A served row: the child gets its keys, K/V heads and page size.
  AttentionProblem decode{8, 32, 1, 128, false, DType::fp16};
  decode.kv_len = 32768;
  decode.kv_heads = 8;
  decode.page_size = 16;
  const std::vector<ProfileRow> served{{5, "fa2_decode", decode, 0}};
  const std::vector<ProfileRow> served_back = parse_profile_rows(format_profile_rows(served));
  REQUIRE(served_back.size() == 1);
  CHECK(served_back[0].problem.key() == decode.key());
  CHECK(served_back[0].problem.page_size == 16);
}

TEST_CASE("child processes: PATH lookup and shell quoting of the recorded command") {
  CHECK(find_executable("sh").has_value());
  CHECK_FALSE(find_executable("/nonexistent/ncu"));
  CHECK_FALSE(find_executable("cfr-no-such-program"));
  CHECK(shell_words({"ncu", "--metrics", "a.sum,b.sum", "it's here"}) ==
        "ncu --metrics a.sum,b.sum 'it'\\''s here'");
}

TEST_CASE("profile: ncu's --chip is the device's GPU table row's ncu_chip, or none") {
  // The stand-in records each command line: --version, the query, the profiling run.
  const fs::path args = fs::temp_directory_path() / fmt::format("cfr-ncu-args-{}", ::getpid());
  const FakeNcu ncu(fmt::format("echo \"$*\" >> '{}'\n{}", args.string(), recording_ncu));
  const auto query_of = [&](const Report& profiled_report, const GpuTable& gpus) {
    fs::remove(args);
    Report report = profiled_report;
    profile_report(report, {.enabled = true, .ncu = ncu.path(), .plugins = {}}, gpus, 7);
    const std::string lines = read_text(args);
    const std::size_t query = lines.find("--query-metrics");
    return query == std::string::npos ? lines
                                      : lines.substr(query, lines.find('\n', query) - query);
  };
  // The H200's row names gh100 (configs/gpus.json, with its source).
  const Report h200 = report_of_recorded_rows();
  CHECK(query_of(h200, shipped_gpus()) == "--query-metrics --chip gh100");
  // A row without ncu_chip: ncu is asked about the local device.
  GpuTable without = shipped_gpus();
  for (GpuSpec& gpu : without.gpus) gpu.ncu_chip.clear();
  CHECK(query_of(h200, without) == "--query-metrics");
  // A GPU the table gained by one entry (shipped_gpus.hpp): its chip, by device name and cc.
  const GpuTable added = parse_gpu_table(test::table_with_made_up_gpu(), "plus-one.json");
  Report other = h200;
  other.devices.front().name = "NVIDIA ZZ 9000";
  other.devices.front().cc = "12.0";
  CHECK(query_of(other, added) == "--query-metrics --chip gz100");
  CHECK(query_of(other, shipped_gpus()) == "--query-metrics");  // no row matches it
  fs::remove(args);
}
