#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "roofline/report/figures.hpp"
#include "roofline/report/report_table.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/energy_readings.hpp"
#include "tests/roofline/profiled_row.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;

namespace {
Report model_only() {
  Report r;
  r.ceiling.gpu = "a100";
  r.ceiling.source = "datasheet";
  r.ceiling.source_detail = "configs/gpus.json";
  r.ceiling.bandwidth_GBps = 2039;
  r.ceiling.peak_TFLOPs = {19.5, 78, 312, 312};
  r.provenance.reasons = {"model projection, not a measurement"};
  r.results.push_back(model_row(fa1_scalar_kernel, seed_shape(), r.ceiling, FlopConvention::exact));
  return r;
}
}  // namespace

TEST_CASE("text, Markdown and CSV print the same figures from one column list") {
  const Report r = model_only();
  const std::string text = render_table(r, TableFormat::text);
  const std::string md = render_table(r, TableFormat::markdown);
  const std::string csv = render_table(r, TableFormat::csv);
  for (const std::string* out : {&text, &md, &csv}) {
    CHECK(out->find("549.") != std::string::npos);       // GFLOP
    CHECK(out->find("8.624") != std::string::npos);      // model GB
    CHECK(out->find("63.") != std::string::npos);        // AI
    CHECK(out->find("median ms") == std::string::npos);  // nothing measured, no measured columns
  }
  // CSV at full precision (8,624,013,312 B, test_traffic_model.cpp), booleans as words.
  CHECK(csv.find(",false,") != std::string::npos);
  CHECK(csv.find(",8.624013312,") != std::string::npos);
  CHECK(md.rfind("| kernel", 0) == 0);
  CHECK(csv.rfind("kernel,dir,dtype", 0) == 0);
}

TEST_CASE("table_cells holds the cells a format prints, one line per report row") {
  Report r = model_only();
  r.results.push_back(r.results[0]);
  r.results[1].kernel = "a\x01|b";
  const TableCells text = table_cells(r, TableFormat::text);
  REQUIRE(text.rows.size() == 2);
  CHECK(text.headers.front() == "kernel");
  CHECK(text.headers.size() == text.rows[1].size());
  CHECK(text.rows[1][0] == "a\\x01|b");  // a control character shown, not sent
  CHECK(table_cells(r, TableFormat::markdown).rows[1][0] == "a\\x01\\|b");
  const TableCells csv = table_cells(r, TableFormat::csv, {"kernel", "causal"});
  CHECK(csv.headers == std::vector<std::string>{"kernel", "causal"});
  CHECK(csv.rows[0] == std::vector<std::string>{r.results[0].kernel, "false"});
}

TEST_CASE("the legend says where every number came from and that a model is not evidence") {
  const std::string legend = render_legend(model_only());
  CHECK(legend.find("exact causal convention") != std::string::npos);
  CHECK(legend.find("ceiling 'a100' (datasheet") != std::string::npos);
  CHECK(legend.find("auditable: false") != std::string::npos);
  CHECK(legend.find("model projection, not a measurement") != std::string::npos);
}

TEST_CASE("--columns picks and orders columns by name, and names an unknown one") {
  const Report r = model_only();
  const std::string md = render_table(r, TableFormat::markdown, {"N", "kernel", "AI"});
  CHECK(md.rfind("| N     | kernel     | AI   |", 0) == 0);
  CHECK(md.find("| 16384 | fa1_scalar | 63.7 |") != std::string::npos);
  CHECK(md.find("GFLOP") == std::string::npos);
  // A measured column asked for by name is shown even in a model report, as "-".
  CHECK(render_table(r, TableFormat::csv, {"kernel", "median ms"}) ==
        "kernel,median ms\nfa1_scalar,\n");
  try {
    (void)render_table(r, TableFormat::text, {"kernel", "speed"});
    FAIL("an unknown column was accepted");
  } catch (const std::invalid_argument& error) {
    CHECK(std::string(error.what()).rfind("unknown column 'speed' (known: kernel, dir,", 0) == 0);
  }
  // The default is compact; "wide" is every default column (issue 12: 202 wide).
  const std::string compact = render_table(r, TableFormat::text);
  const std::string wide = render_table(r, TableFormat::text, {"wide"});
  CHECK(compact.substr(0, compact.find('\n')) ==
        "kernel      dir  dtype  B  H  N      d   causal  unit       GFLOP  model GB  AI    "
        "ridge  regime         roof TFLOPS  roof ms  DRAM model  status");
  CHECK(wide.find("tile") != std::string::npos);
  CHECK(compact.find("tile") == std::string::npos);
  const std::vector<std::string> names = table_column_names();
  CHECK(names.front() == "kernel");
  CHECK(std::find(names.begin(), names.end(), "% roof") != names.end());
}

TEST_CASE("the default columns add the measured regime and % roof when a row has counters") {
  Report r;
  r.ceiling = test::h200_profile_ceiling();
  r.results.push_back(test::profiled_row(r.ceiling));
  const std::string profiled = render_table(r, TableFormat::csv);
  const std::string header = profiled.substr(0, profiled.find('\n'));
  // Beside the model's regime and % roof, and the DRAM model they are from (the L2-aware one),
  // what Nsight Compute's DRAM bytes say (the hand-made row: compute-bound at AI 268).
  for (const char* column :
       {"DRAM model", "regime", "% roof", "regime (ncu DRAM)", "% roof (ncu DRAM)", "limiter"}) {
    INFO(column);
    CHECK(header.find(column) != std::string::npos);
  }
  // The model errors and the timing check are in the wide set.
  const std::string wide = render_table(r, TableFormat::csv, {"wide"});
  for (const char* column : {"DRAM model err", "L2 model err", "timing ratio"}) {
    INFO(column);
    CHECK(header.find(column) == std::string::npos);
    CHECK(wide.substr(0, wide.find('\n')).find(column) != std::string::npos);
  }
  CHECK(profiled.find("l2_aware") != std::string::npos);
  CHECK(profiled.find("compute-bound") != std::string::npos);
  r.results.front().profile.reset();
  CHECK(render_table(r, TableFormat::csv).find("limiter") == std::string::npos);
}

TEST_CASE("n says how many samples were discarded as throttled, or that throttled ones were kept") {
  // A measured row of 3 kept samples (profiled_row.hpp); the cold timer's two outcomes.
  Report r;
  r.ceiling = test::h200_profile_ceiling();
  r.results.push_back(test::profiled_row(r.ceiling));
  const auto n_cell = [&r] {
    return render_table(r, TableFormat::markdown, {"n", "throttled"}).substr(0, 200);
  };
  CHECK(n_cell().find("| 3 ") != std::string::npos);
  r.results.front().timing->throttled_discarded = 4;
  CHECK(n_cell().find("| 3 -4thr | 4 ") != std::string::npos);
  r.results.front().timing->throttled_discarded = 0;
  r.results.front().timing->kept_throttled = true;
  CHECK(n_cell().find("| 3 thr ") != std::string::npos);
  // CSV keeps the raw count.
  r.results.front().timing->throttled_discarded = 4;
  r.results.front().timing->kept_throttled = false;
  CHECK(render_table(r, TableFormat::csv, {"n", "throttled"}) == "n,throttled\n3,4\n");
}

namespace {
std::string csv_header(const Report& r, const std::vector<std::string>& columns = {}) {
  const std::string csv = render_table(r, TableFormat::csv, columns);
  return csv.substr(0, csv.find('\n'));
}
}  // namespace

TEST_CASE("the default and wide sets come from the descriptors' flags, in their committed order") {
  // The headers `table` printed for results/h200/sweep-causal.json and profile/default.json
  // before the sets were flags (issue 21: no column moved).
  Report r;
  r.ceiling = test::h200_profile_ceiling();
  r.results.push_back(test::profiled_row(r.ceiling));
  CHECK(csv_header(r) ==
        "kernel,dir,dtype,B,H,N,d,causal,median ms,noise %,n,TFLOPS,% roof,AI,regime,check,"
        "DRAM model,regime (ncu DRAM),% roof (ncu DRAM),limiter,status");
  CHECK(csv_header(r, {"wide"}) ==
        "kernel,dir,dtype,B,H,N,d,causal,tile,unit,dev,GFLOP,model GB,DRAM model,AI,AI low,AI high,"
        "ridge,point regime,regime,"
        "roof TFLOPS,roof ms,median ms,TFLOPS,GB/s,% BW,% roof,regime (ncu DRAM),% roof (ncu "
        "DRAM),limiter,DRAM model err,L2 model err,timing ratio,cycle ratio,process cycle ratio,"
        "sweep/process,launch spread,noise "
        "%,n,throttled,check,"
        "status");
  // `--columns why`: what the row is, its instruction's roof and what binds it.
  CHECK(csv_header(r, {"why"}) ==
        "kernel,dir,dtype,B,H,N,d,causal,instruction,instr roof TFLOPS,% instr roof,limiter,"
        "% limiter,tensor pipe,FMA pipe,LSU pipe,shared pipe,issue slots,no eligible,top stalls");
  r.results.front().profile.reset();
  CHECK(csv_header(r) ==
        "kernel,dir,dtype,B,H,N,d,causal,median ms,noise %,n,TFLOPS,% roof,AI,regime,check,"
        "DRAM model,status");
  CHECK(csv_header(r, {"wide"}) ==
        "kernel,dir,dtype,B,H,N,d,causal,tile,unit,dev,GFLOP,model GB,DRAM model,AI,AI low,AI high,"
        "ridge,point regime,regime,"
        "roof TFLOPS,roof ms,median ms,TFLOPS,GB/s,% BW,% roof,noise %,n,throttled,check,status");
  // A model report: no measured column in either set, and the model's own compact set.
  CHECK(csv_header(model_only(), {"wide"}) ==
        "kernel,dir,dtype,B,H,N,d,causal,tile,unit,GFLOP,model GB,DRAM model,AI,AI low,AI high,"
        "ridge,point regime,regime,"
        "roof TFLOPS,roof ms,status");
}

TEST_CASE("a figure flagged for a set is in that set's table, at its compact part") {
  // Every figure's flags against the tables: a column set is its descriptors, no list beside.
  Report measured;
  measured.ceiling = test::h200_profile_ceiling();
  measured.results.push_back(test::profiled_row(measured.ceiling));
  measured.results.front().energy = test::measured_energy();
  record_energy_figures(*measured.results.front().energy,
                        measured.results.front().model->flops.counted());
  const std::string measured_compact = "," + csv_header(measured) + ",";
  const std::string measured_wide = "," + csv_header(measured, {"wide"}) + ",";
  const std::string model_compact = "," + csv_header(model_only()) + ",";
  for (const Figure& f : row_figures()) {
    INFO(f.tag);
    const std::string cell = fmt::format(",{},", f.label);
    const bool model_figure = f.source != FigureSource::measured &&
                              f.source != FigureSource::derived &&
                              f.source != FigureSource::historical;
    // A figure shown only where a row has it (the memory roof): neither report's row does.
    const bool here = f.shown_where == nullptr;
    CHECK((measured_wide.find(cell) != std::string::npos) ==
          (here && (f.column_sets & ColumnSet::wide) != 0));
    CHECK((measured_compact.find(cell) != std::string::npos) ==
          (here && (f.column_sets & ColumnSet::compact_measured) != 0));
    if (model_figure) {
      CHECK((model_compact.find(cell) != std::string::npos) ==
            (here && (f.column_sets & ColumnSet::compact_model) != 0));
    }
    // A figure in a compact set says where it sits there.
    CHECK(((f.column_sets & ColumnSet::compact) != 0) == (f.compact_part != CompactPart::none));
  }
}

TEST_CASE("the served-shape columns (Hkv, Nk, page) show by default only beside such a row") {
  Report report;
  report.ceiling.gpu = "h200";
  report.ceiling.bandwidth_GBps = 4800;
  report.ceiling.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  report.results.push_back(model_row(fa2_mma_kernel, {1, 8, 1024, 64, false, DType::fp16},
                                     report.ceiling, FlopConvention::exact));
  const auto header = [&](const std::vector<std::string>& columns) {
    const std::string csv = render_table(report, TableFormat::csv, columns);
    return csv.substr(0, csv.find('\n'));
  };
  for (const auto& columns : {std::vector<std::string>{}, std::vector<std::string>{"wide"}}) {
    CHECK(header(columns).find(",Nk,") == std::string::npos);
    CHECK(header(columns).find(",Hkv,") == std::string::npos);
  }
  AttentionProblem decode{1, 32, 1, 128, false, DType::fp16};
  decode.kv_len = 4096;
  decode.kv_heads = 8;
  decode.page_size = 16;
  report.results.push_back(
      model_row(fa2_decode_kernel, decode, report.ceiling, FlopConvention::exact));
  for (const auto& columns : {std::vector<std::string>{}, std::vector<std::string>{"wide"}}) {
    CHECK(header(columns).find(",H,Hkv,N,Nk,d,page,") != std::string::npos);
  }
  // The square row reads as square; the decode row its own fields.
  const std::string csv = render_table(report, TableFormat::csv, {"kernel", "Hkv", "Nk", "page"});
  CHECK(csv.find("fa2_mma,8,1024,0\n") != std::string::npos);
  CHECK(csv.find("fa2_decode,8,4096,16\n") != std::string::npos);
}

TEST_CASE("the memory roof column shows by default only where a row is judged on the read roof") {
  Report report;
  report.ceiling.gpu = "h200";
  report.ceiling.bandwidth_GBps = 3935;
  report.ceiling.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  AttentionProblem decode{8, 32, 1, 128, false, DType::fp16};
  decode.kv_len = 32768;
  decode.kv_heads = 8;
  report.results.push_back(model_row(fa2_mma_kernel, {1, 8, 1024, 64, false, DType::fp16},
                                     report.ceiling, FlopConvention::exact));
  report.results.push_back(
      model_row(fa2_decode_kernel, decode, report.ceiling, FlopConvention::exact));
  const auto header = [&](const std::vector<std::string>& columns) {
    const std::string csv = render_table(report, TableFormat::csv, columns);
    return csv.substr(0, csv.find('\n'));
  };
  // Without a read bandwidth every row is judged on the copy's: no column.
  for (const auto& columns : {std::vector<std::string>{}, std::vector<std::string>{"wide"}}) {
    CHECK(header(columns).find("memory roof") == std::string::npos);
  }
  report.ceiling.read_bandwidth_GBps = 4600;
  for (ResultRow& row : report.results) {
    row = model_row(*find_kernel(row.kernel), row.problem, report.ceiling, FlopConvention::exact);
  }
  CHECK(header({}).find(",model GB,memory roof,AI,ridge,regime,") != std::string::npos);
  CHECK(header({"wide"}).find(",DRAM model,memory roof,AI,") != std::string::npos);
  const std::string csv = render_table(report, TableFormat::csv, {"kernel", "memory roof"});
  CHECK(csv == "kernel,memory roof\nfa2_mma,dram\nfa2_decode,dram_read\n");
}
