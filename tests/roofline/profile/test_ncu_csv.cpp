#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "roofline/profile/ncu_csv.hpp"
#include "tests/roofline/ncu_fixtures.hpp"

using namespace cfr;
using namespace cfr::ncu;

namespace {

const std::string nvtx_header =
    R"("ID","Kernel Name","Block Size","Grid Size",)"
    R"("thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",)"
    R"("gpu__time_duration.sum","dram__bytes_read.sum","sm__cycles_elapsed.avg.per_second",)"
    R"("launch__grid_size")"
    "\n"
    R"("","","","","","ns","byte","hz","")"
    "\n";

std::string record(int id, const std::string& range, const std::string& duration,
                   const std::string& bytes, const std::string& clock, const std::string& grid) {
  return fmt::format(
      R"~("{}","k(float *)","(128, 1, 1)","({}, 1, 1)","7  ""<default domain>:cfr_profile:)~"
      R"~(none:none:none:none:none:none""  ""<default domain>:{}:none:none:none:none:none:none"" )~"
      R"~(","{}","{}","{}","{}")~"
      "\n",
      id, grid, range, duration, bytes, clock, grid);
}

std::string message_of(const std::string& text) {
  try {
    const auto launches = parse_raw_csv(text);
    (void)group_rows(launches);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("ncu probe: NVTX stacks, grid, block, units and separated numbers, as ncu 2025.3 wrote") {
  // fixtures/ncu/nvtx-probe.csv: three launches, row_3 then row_7 twice.
  const std::vector<Launch> launches = parse_raw_csv(test::read_fixture("nvtx-probe.csv"));
  REQUIRE(launches.size() == 3);
  CHECK(launches[0].id == 0);
  CHECK(launches[0].kernel_name == "row_kernel_a(float *)");
  CHECK(launches[0].nvtx_ranges == std::vector<std::string>{"cfr_profile", "row_3"});
  CHECK(launches[2].nvtx_ranges == std::vector<std::string>{"cfr_profile", "row_7"});
  CHECK(launches[0].grid == Dim3{3, 1, 1});
  CHECK(launches[2].block == Dim3{128, 1, 1});
  const MetricValue* duration = launches[0].metric("gpu__time_duration.sum");
  REQUIRE(duration != nullptr);
  CHECK(duration->unit == "ns");
  CHECK(duration->value == 2912.0);  // printed "2,912"
  // printed "62,914,560": the H200's 60 MiB L2.
  CHECK(launches[0].metric("device__attribute_l2_cache_size")->value == 62914560.0);
  // Text values stay, unavailable as numbers.
  const MetricValue* name = launches[0].metric("device__attribute_display_name");
  CHECK_FALSE(name->available());
  CHECK(name->text == "NVIDIA H200");
  // Launch columns are not metrics; a metric the recording lacks is absent.
  CHECK(launches[0].metric("Kernel Name") == nullptr);
  CHECK(launches[0].metric("dram__bytes_read.sum") == nullptr);
}

TEST_CASE("--print-nvtx-rename kernel prefixes the innermost range; the stack is the same") {
  const std::vector<Launch> launches = parse_raw_csv(test::read_fixture("nvtx-probe-rename.csv"));
  REQUIRE(launches.size() == 3);
  CHECK(launches[1].kernel_name == "row_7/row_kernel_a(float *)");
  CHECK(launches[1].nvtx_ranges == std::vector<std::string>{"cfr_profile", "row_7"});
}

TEST_CASE("an unfiltered sweep: no NVTX column, program output between ncu's lines") {
  // fixtures/ncu/sweep-unfiltered.csv: the sweep's own table and notes surround the records.
  const std::vector<Launch> launches = parse_raw_csv(test::read_fixture("sweep-unfiltered.csv"));
  REQUIRE(launches.size() == 4);
  CHECK(launches[3].kernel_name.starts_with("void kernels::<unnamed>::reference_forward_rows"));
  CHECK(launches[3].nvtx_ranges.empty());
  CHECK(launches[3].metric("gpu__time_duration.sum")->value == 433312.0);
  CHECK(launches[3].metric("lts__t_sector_hit_rate.pct")->unit == "%");
  CHECK(launches[3].metric("lts__t_sectors_srcunit_ltcfabric.sum") == nullptr);
  CHECK(group_rows(launches).empty());
}

TEST_CASE("l2data: 208 launches in 120 rows; naive and fa1_bwd rows hold three launches") {
  const std::vector<Launch> launches = parse_raw_csv(test::read_fixture("l2data.csv"));
  REQUIRE(launches.size() == 208);
  const auto rows = group_rows(launches);
  REQUIRE(rows.size() == 120);
  const RowCounters& naive = rows.at(0);
  CHECK(naive.range == "cfr_row_0");
  REQUIRE(naive.launch_ids == std::vector<std::int64_t>{0, 1, 2});
  // dram__bytes_read.sum of the three launches as printed: 2,118,656 + 16,792,576 + 17,842,432.
  CHECK(naive.metric("dram__bytes_read.sum")->value == 36753664.0);
  CHECK(naive.metric("dram__bytes_read.sum")->unit == "byte");
  // The durations add: 8,448 + 40,032 + 11,040 ns.
  CHECK(naive.metric("gpu__time_duration.sum")->value == 59520.0);
  // Grids differ between the three kernels: no common value.
  CHECK_FALSE(naive.metric("launch__grid_size")->available());
  CHECK(naive.metric("launch__grid_size")->text == "differs between launches");
  CHECK(naive.metric("device__attribute_l2_cache_size")->value == 62914560.0);
  CHECK(rows.at(20).kernel_names.size() == 1);
  CHECK(rows.at(80).launch_ids.size() == 3);
}

TEST_CASE("per-second rates combine as a mean weighted by each launch's duration") {
  // 1 GHz for 100 ns and 2 GHz for 300 ns: (100 + 600) / 400 = 1.75 GHz, i.e. cycles / time.
  const std::string text = nvtx_header +
                           record(0, "cfr_row_4", "100", "1,000", "1,000,000,000", "2") +
                           record(1, "cfr_row_4", "300", "2,500", "2,000,000,000", "2");
  const auto rows = group_rows(parse_raw_csv(text));
  const RowCounters& row = rows.at(4);
  CHECK(row.metric("sm__cycles_elapsed.avg.per_second")->value == Approx(1.75e9));
  CHECK(row.metric("dram__bytes_read.sum")->value == 3500.0);
  CHECK(row.metric("gpu__time_duration.sum")->value == 400.0);
  CHECK(row.metric("launch__grid_size")->value == 2.0);  // common to both launches
}

TEST_CASE("each profiled launch of a row in its own range: one set of counters a launch") {
  // profile-child --launches 2: row 4's two launches, fa1_bwd-like (two kernels each), then
  // row 9 written as before the launch ranges (its kernels outside any launch range).
  const auto in = [](std::string launch) {
    return "cfr_row_4:none:none:none:none:none:none\"\"  \"\"<default domain>:" + launch;
  };
  const std::string text = nvtx_header + record(0, in("cfr_launch_0"), "100", "10", "1", "2") +
                           record(1, in("cfr_launch_0"), "300", "30", "1", "2") +
                           record(2, in("cfr_launch_1"), "150", "11", "1", "2") +
                           record(3, in("cfr_launch_1"), "250", "31", "1", "2") +
                           record(4, "cfr_row_9", "500", "7", "1", "2");
  const std::vector<Launch> launches = parse_raw_csv(text);
  REQUIRE(launches[2].nvtx_ranges ==
          std::vector<std::string>{"cfr_profile", "cfr_row_4", "cfr_launch_1"});
  const auto rows = group_row_launches(launches);
  REQUIRE(rows.size() == 2);
  const std::vector<RowCounters>& four = rows.at(4);
  REQUIRE(four.size() == 2);
  CHECK(four[0].range == "cfr_row_4/cfr_launch_0");
  CHECK(four[0].launch_ids == std::vector<std::int64_t>{0, 1});
  CHECK(four[0].metric("gpu__time_duration.sum")->value == 400.0);
  CHECK(four[1].metric("dram__bytes_read.sum")->value == 42.0);
  REQUIRE(rows.at(9).size() == 1);
  CHECK(rows.at(9)[0].range == "cfr_row_9");
  // group_rows still combines every launch of a row.
  CHECK(group_rows(launches).at(4).metric("gpu__time_duration.sum")->value == 800.0);
  CHECK(message_of(nvtx_header + record(0, in("cfr_launch_z"), "1", "1", "1", "1")).empty());
  CHECK_THROWS_WITH(group_row_launches(parse_raw_csv(
                        nvtx_header + record(0, in("cfr_launch_z"), "1", "1", "1", "1"))),
                    "line 3: NVTX range 'cfr_launch_z' is not cfr_launch_<index>");
}

TEST_CASE("the timer floors group by their own ranges, apart from the rows") {
  // profile-child --time-samples: the floor of 2 empty kernels on device 1 (range
  // cfr_floor_1002), two profiled launches, beside row 2 (whose index a floor does not take).
  const auto floor = [](std::string launch) {
    return "cfr_floor_1002:none:none:none:none:none:none\"\"  \"\"<default domain>:" + launch;
  };
  const std::string text = nvtx_header + record(0, floor("cfr_launch_0"), "2,100", "0", "1", "1") +
                           record(1, floor("cfr_launch_0"), "1,900", "0", "1", "1") +
                           record(2, floor("cfr_launch_1"), "2,050", "0", "1", "1") +
                           record(3, floor("cfr_launch_1"), "1,950", "0", "1", "1") +
                           record(4, "cfr_row_2", "500", "7", "1", "2");
  const std::vector<Launch> launches = parse_raw_csv(text);
  CHECK(floor_range_index(1, 2) == 1002);
  const auto floors = group_row_launches(launches, floor_range_prefix);
  REQUIRE(floors.size() == 1);
  const std::vector<RowCounters>& two = floors.at(1002);
  REQUIRE(two.size() == 2);
  CHECK(two[0].range == "cfr_floor_1002/cfr_launch_0");
  CHECK(two[0].kernel_names.size() == 2);
  CHECK(two[0].metric("gpu__time_duration.sum")->value == 4000.0);
  CHECK(two[1].metric("gpu__time_duration.sum")->value == 4000.0);
  const auto rows = group_row_launches(launches);
  REQUIRE(rows.size() == 1);
  CHECK(rows.count(2) == 1);
}

TEST_CASE("combine rules follow the metric's suffix") {
  CHECK(combine_rule("dram__bytes_read.sum") == Combine::sum);
  CHECK(combine_rule("dram__bytes_read.avg") == Combine::sum);
  CHECK(combine_rule("dram__bytes_read.max") == Combine::max);
  CHECK(combine_rule("dram__bytes_read.min") == Combine::min);
  CHECK(combine_rule("sm__cycles_elapsed.avg.per_second") == Combine::duration_weighted_mean);
  CHECK(combine_rule("lts__t_sector_hit_rate.pct") == Combine::duration_weighted_mean);
  // A share of peak (the limiter's pipe, issue and scheduler counters) is a rate too.
  CHECK(combine_rule("sm__inst_issued.avg.pct_of_peak_sustained_active") ==
        Combine::duration_weighted_mean);
  CHECK(combine_rule("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_"
                     "elapsed") == Combine::duration_weighted_mean);
  CHECK(combine_rule("launch__registers_per_thread") == Combine::common);
}

TEST_CASE("empty and n/a values are unavailable, and stay so in the row's sum") {
  const std::string text = nvtx_header + record(0, "cfr_row_1", "100", "n/a", "1", "1") +
                           record(1, "cfr_row_1", "100", "", "1", "1");
  const std::vector<Launch> launches = parse_raw_csv(text);
  CHECK_FALSE(launches[0].metric("dram__bytes_read.sum")->available());
  CHECK(launches[0].metric("dram__bytes_read.sum")->text == "n/a");
  const RowCounters row = group_rows(launches).at(1);
  CHECK_FALSE(row.metric("dram__bytes_read.sum")->available());
  CHECK(row.metric("dram__bytes_read.sum")->text == "unavailable in launch 0");
}

TEST_CASE("bad input: one line naming the line and the problem") {
  const std::string good = nvtx_header + record(0, "cfr_row_1", "100", "1", "1", "1");
  CHECK(message_of(good).empty());
  CHECK(message_of(nvtx_header + record(0, "cfr_row_1", "100", "1,5", "1", "1")) ==
        "line 3: column 'dram__bytes_read.sum': '1,5' is not a number");
  CHECK(message_of(nvtx_header + "\"0\",\"k\"\n") == "line 3: 2 fields; the header has 9");
  CHECK(message_of(nvtx_header + "\"0\",\"k\n") ==
        "line 3: a quoted field is not closed on its line");
  CHECK(message_of(record(0, "cfr_row_1", "100", "1", "1", "1") +
                   record(1, "cfr_row_1", "100", "1", "1", "1")) ==
        "line 1: the header has no 'ID' column");
  CHECK(message_of(nvtx_header.substr(0, nvtx_header.find('\n') + 1)) ==
        "line 1: the header is not followed by a units record");
  CHECK(message_of(nvtx_header + record(0, "cfr_row_x", "100", "1", "1", "1")) ==
        "line 3: NVTX range 'cfr_row_x' is not cfr_row_<index>");
  std::string bad_grid = good;
  bad_grid.replace(bad_grid.find("(1, 1, 1)"), 9, "(1, 1)");
  CHECK(message_of(bad_grid) == "line 3: column 'Grid Size': '(1, 1)' is not (x, y, z)");
}

TEST_CASE("a repeated identical header is skipped; a different one is an error") {
  const std::string one = nvtx_header + record(0, "cfr_row_1", "100", "1", "1", "1");
  CHECK(parse_raw_csv(one + one).size() == 2);
  std::string other = nvtx_header;
  other.replace(other.find("launch__grid_size"), 17, "launch__block_size");
  CHECK(message_of(one + other) == "line 4: a second header with different columns");
}
