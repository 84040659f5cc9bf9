#include <catch2/catch.hpp>

#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/seed_shape.hpp"

using namespace cfr;
using nlohmann::json;

namespace {

Report sample_report() {
  Report r;
  r.tool.version = "0.1.0";
  r.tool.git_commit = "abc";
  r.tool.git_dirty = false;
  r.provenance.source = ProvenanceSource::measured;
  r.provenance.auditable = true;
  r.provenance.created_utc = "2026-12-02T00:00:00Z";
  r.provenance.command = "cuflash-roofline sweep";
  r.devices.push_back(
      {0, "NVIDIA H200", "9.0", 132, 62914560, 1.5e11, 1980, 3201, "13.0", "13.0", "0000:00:01.0"});
  r.ceiling.gpu = "h200";
  r.ceiling.source = "datasheet";
  r.ceiling.bandwidth_GBps = 4800;
  r.ceiling.peak_TFLOPs = {67, 133.8, 989.4, 989.4};
  r.ceiling.matches_device = true;
  ResultRow row = model_row(fa1_wmma_kernel, seed_shape(true), r.ceiling, FlopConvention::half);
  row.device = 0;
  row.timing = Timing{};
  row.timing->samples_ms = {3.0, 3.1, 2.9};
  row.timing->summary = summarize(row.timing->samples_ms);
  row.achieved = achieved_figures(*row.model, row.timing->summary.median, r.ceiling);
  row.correctness = Correctness{"reference_forward fp32", 1e-3,        2e-3, 5e-3, true,
                                {{"O", 1e-3, 2e-3}},      std::nullopt};
  r.results.push_back(row);
  r.results.push_back(model_row(fa1_wmma_kernel, {1, 8, 1024, 64, false, DType::fp32}, r.ceiling,
                                FlopConvention::half));
  return r;
}

// The reader's one-line refusal, or "no error".
std::string error_of(const json& document) {
  try {
    report_from_json(document);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a report survives a JSON round trip unchanged") {
  const Report original = sample_report();
  const json first = to_json(original);
  const Report back = report_from_json(json::parse(first.dump()));
  CHECK(to_json(back) == first);
  CHECK(back.results[0].timing->samples_ms == std::vector<double>{3.0, 3.1, 2.9});
  CHECK(back.results[0].model->flops.convention == FlopConvention::half);
  CHECK(back.results[1].status == RowStatus::skipped);
  CHECK(first["results"][1]["tile"]["br"] == 64);
  CHECK(first["schema"] == "cuflash-roofline/report/v1");
}

TEST_CASE("schema violations name the key and the row") {
  const json good = to_json(sample_report());
  json wrong_schema = good;
  wrong_schema["schema"] = "other/v9";
  CHECK(error_of(wrong_schema) ==
        "schema: expected 'cuflash-roofline/report/v1', found 'other/v9'");
  json no_median = good;
  no_median["results"][0]["timing"].erase("median_ms");
  CHECK(error_of(no_median) == "results[0].timing.median_ms: missing");
  json text_sample = good;
  text_sample["results"][0]["timing"]["samples_ms"][1] = "fast";
  CHECK(error_of(text_sample) == "results[0].timing.samples_ms[1]: expected a finite number");
  json bad_dtype = good;
  bad_dtype["results"][1]["dtype"] = "fp8";
  CHECK(error_of(bad_dtype) == "results[1].dtype: unknown dtype 'fp8'");
  json no_results = good;
  no_results.erase("results");
  CHECK(error_of(no_results) == "results: missing");
  CHECK(error_of(json::array()) == "(top level): expected an object");
}

TEST_CASE("figures no measurement can have, and integers past int, are refused by key path") {
  // Issue 12: negative samples audited clean; a device of 2^32 was truncated to 0.
  const json good = to_json(sample_report());
  const std::pair<std::string, std::function<void(json&)>> cases[] = {
      {"results[0].timing.samples_ms[2]: must be positive, found -1",
       [](json& d) { d["results"][0]["timing"]["samples_ms"][2] = -1; }},
      {"results[0].timing.samples_ms[0]: must be positive, found 0",
       [](json& d) { d["results"][0]["timing"]["samples_ms"][0] = 0; }},
      {"results[0].timing.stdev_ms: must not be negative, found -0.1",
       [](json& d) { d["results"][0]["timing"]["stdev_ms"] = -0.1; }},
      {"results[1].heads: must be at least 1, found 0",
       [](json& d) { d["results"][1]["heads"] = 0; }},
      {"results[0].traffic.breakdown.K: must not be negative, found -5",
       [](json& d) { d["results"][0]["traffic"]["breakdown"]["K"] = -5; }},
      {"ceiling.bandwidth_GBps: must be positive, found 0",
       [](json& d) { d["ceiling"]["bandwidth_GBps"] = 0; }},
      {"ceiling.peak_TFLOPs.fp16_tensor: 1e+300 TFLOP/s over 4800 GB/s gives a ridge of inf "
       "FLOP/byte",
       [](json& d) { d["ceiling"]["peak_TFLOPs"]["fp16_tensor"] = 1e300; }},
      {"results[0].device: 4294967296 is out of range",
       [](json& d) { d["results"][0]["device"] = std::int64_t{1} << 32; }},
      {"devices[0].index: must not be negative, found -1",
       [](json& d) { d["devices"][0]["index"] = -1; }},
      {"devices[0].sm_count: 8589934592 is out of range",
       [](json& d) { d["devices"][0]["sm_count"] = std::int64_t{1} << 33; }},
      // Issue 21: the position was the distance to a copy of the character, a
      // different number every run.
      {"results[1].kernel: has a control character (byte 0x1b) at position 4",
       [](json& d) {
         d["results"][1]["kernel"] =
             "fa1_\x1b"
             "wmma";
       }},
  };
  for (const auto& [message, mutate] : cases) {
    json edited = good;
    mutate(edited);
    CHECK(error_of(edited) == message);
  }
}

// docs/report-schema.md, timing.l2_flush_mode: written when recorded, read
// back, absent (older reports) read as not recorded; another word is refused.
TEST_CASE("timing.l2_flush_mode round-trips, may be absent, and takes read or memset only") {
  Report report = sample_report();
  report.results[0].timing->l2_flush_mode = "read";
  const json written = to_json(report);
  CHECK(written["results"][0]["timing"]["l2_flush_mode"] == "read");
  CHECK(report_from_json(written).results[0].timing->l2_flush_mode == "read");
  CHECK_FALSE(to_json(sample_report())["results"][0]["timing"].contains("l2_flush_mode"));
  json bad = written;
  bad["results"][0]["timing"]["l2_flush_mode"] = "evict";
  CHECK(error_of(bad) ==
        "results[0].timing.l2_flush_mode: expected \"read\" or \"memset\", got \"evict\"");
}

// docs/report-schema.md: correctness.sample is written only for a
// sub-sampled check, its 64-bit seed as a hex string.
TEST_CASE("correctness.sample round-trips with its seed in hex, and is absent for a full check") {
  Report report = sample_report();
  report.results[0].correctness->sample = CheckSample{0xfedcba9876543210ull, 4096, 2048};
  const json written = to_json(report);
  const json& sample = written["results"][0]["correctness"]["sample"];
  CHECK(sample["seed"] == "0xfedcba9876543210");
  CHECK(sample["query_rows"] == 4096);
  CHECK(sample["key_rows"] == 2048);
  CHECK(report_from_json(written).results[0].correctness->sample ==
        report.results[0].correctness->sample);
  CHECK_FALSE(to_json(sample_report())["results"][0]["correctness"].contains("sample"));
  json bad = written;
  bad["results"][0]["correctness"]["sample"]["seed"] = "12";
  CHECK(error_of(bad) == "results[0].correctness.sample: seed '12' is not a hex word (0x...)");
  bad["results"][0]["correctness"]["sample"]["seed"] = "0xzz";
  CHECK(error_of(bad) == "results[0].correctness.sample: seed '0xzz' is not a hex word (0x...)");
}

// docs/report-schema.md: provenance.plugins is written only when a plugin
// brought kernels, and read back field by field.
TEST_CASE("provenance.plugins round-trips and is absent without plugins") {
  Report report = sample_report();
  CHECK_FALSE(to_json(report)["provenance"].contains("plugins"));
  report.provenance.plugins = {{"my_fwd", "2.1", "lib/libmine.so", std::string(64, 'a')},
                               {"my_bwd", "2.1", "lib/libmine.so", std::string(64, 'a')}};
  const json written = to_json(report);
  CHECK(written["provenance"]["plugins"][1]["kernel"] == "my_bwd");
  const Report back = report_from_json(json::parse(written.dump()));
  CHECK(back.provenance.plugins == report.provenance.plugins);
  json no_sha = written;
  no_sha["provenance"]["plugins"][0].erase("sha256");
  CHECK_THROWS_WITH(report_from_json(no_sha), "provenance.plugins[0].sha256: missing");
}

// docs/report-schema.md: a peer's report names its software in
// provenance.environment and its tool has no build; the tool's own reports
// have no environment.
TEST_CASE("provenance.environment round-trips; a tool without a build writes no build keys") {
  Report report = sample_report();
  CHECK_FALSE(to_json(report)["provenance"].contains("environment"));
  CHECK_FALSE(to_json(report)["tool"].contains("build_type"));
  report.provenance.environment = {{"python", "3.12.3"}, {"torch", "2.11.0+cu130"}};
  report.tool.build_type = "release";
  report.tool.cuda_archs = "90a";
  const json written = to_json(report);
  CHECK(written["provenance"]["environment"]["torch"] == "2.11.0+cu130");
  CHECK(written["tool"]["cuda_archs"] == "90a");
  const Report back = report_from_json(json::parse(written.dump()));
  CHECK(back.provenance.environment == report.provenance.environment);
  CHECK(back.tool.build_type == "release");
  json number = written;
  number["provenance"]["environment"]["torch"] = 2.11;
  CHECK_THROWS_WITH(report_from_json(number), "provenance.environment.torch: expected a string");
}

TEST_CASE(
    "the throttle threshold and the kept-throttled fallback round-trip; older rows lack them") {
  // sweep --throttle-threshold 75 (nvbench's default) with 2 samples discarded.
  Report r = sample_report();
  r.results[0].timing->throttle_threshold_percent = 75;
  r.results[0].timing->throttled_discarded = 2;
  r.results[0].timing->kept_throttled = true;
  const json first = to_json(r);
  CHECK(first["results"][0]["timing"]["throttle_threshold_percent"] == 75);
  const Report back = report_from_json(json::parse(first.dump()));
  CHECK(back.results[0].timing->throttle_threshold_percent == 75);
  CHECK(back.results[0].timing->kept_throttled);
  CHECK(back.results[0].timing->throttled_discarded == 2);

  json older = first;
  older["results"][0]["timing"].erase("throttle_threshold_percent");
  older["results"][0]["timing"].erase("kept_throttled");
  const Report old_back = report_from_json(older);
  CHECK_FALSE(old_back.results[0].timing->throttle_threshold_percent.has_value());
  CHECK_FALSE(old_back.results[0].timing->kept_throttled);

  json negative = first;
  negative["results"][0]["timing"]["throttle_threshold_percent"] = -1;
  CHECK(error_of(negative).find("throttle_threshold_percent") != std::string::npos);
}

TEST_CASE(
    "a served shape's row carries kv_len, kv_heads, page_size and kv_splits; a square "
    "row none of them") {
  Report report = sample_report();
  ResultRow row;
  row.kernel = "decode_like";
  row.problem = {4, 32, 1, 128, false, DType::fp16};
  row.problem.kv_len = 8192;
  row.problem.kv_heads = 8;
  row.problem.page_size = 16;
  row.compute_unit = ComputeUnit::fp16_tensor;
  row.tile = {16, 64};
  const KernelRecord record{Direction::forward,
                            TrafficModelKind::split_kv,
                            row.tile,
                            ComputeUnit::fp16_tensor,
                            nullptr,
                            std::nullopt,
                            8};
  row.model = model_figures(record, row.problem, report.ceiling, FlopConvention::exact);
  report.results.push_back(row);
  const json first = to_json(report);
  const json& served = first["results"][2];
  CHECK(served["kv_len"] == 8192);
  CHECK(served["kv_heads"] == 8);
  CHECK(served["page_size"] == 16);
  CHECK(served["traffic"]["kv_splits"] == 8);
  CHECK(served["traffic"]["breakdown"].contains("page_table"));
  for (const char* key : {"kv_len", "kv_heads", "page_size"}) {
    CHECK_FALSE(first["results"][0].contains(key));
  }
  CHECK_FALSE(first["results"][0]["traffic"].contains("kv_splits"));
  const Report back = report_from_json(json::parse(first.dump()));
  CHECK(back.results[2].problem == row.problem);
  CHECK(back.results[2].model->traffic.kv_splits == 8);
  CHECK(kernel_record(back.results[2]).kv_splits == 8);
  CHECK(to_json(back) == first);
}

TEST_CASE(
    "the ceiling's read bandwidth and each row's memory roof round-trip; a report from before "
    "them reads as judged on dram") {
  // A measured ceiling with a read stream (4600 GB/s, made up) and a split_kv row on it.
  Report report = sample_report();
  report.ceiling.source = "measured";
  report.ceiling.read_bandwidth_GBps = 4600;
  AttentionProblem decode{4, 32, 1, 128, false, DType::fp16};
  decode.kv_len = 8192;
  decode.kv_heads = 8;
  ResultRow row = model_row(fa2_decode_kernel, decode, report.ceiling, FlopConvention::exact);
  REQUIRE(row.model->memory_roof == MemoryRoof::dram_read);
  report.results.push_back(row);
  const json first = to_json(report);
  CHECK(first["ceiling"]["read_bandwidth_GBps"] == 4600);
  CHECK(first["results"][0]["memory_roof"] == "dram");
  CHECK(first["results"][2]["memory_roof"] == "dram_read");
  const Report back = report_from_json(json::parse(first.dump()));
  CHECK(back.ceiling.read_bandwidth_GBps == 4600);
  CHECK(back.results[2].model->memory_roof == MemoryRoof::dram_read);
  CHECK(to_json(back) == first);

  json older = first;
  older["ceiling"].erase("read_bandwidth_GBps");
  for (json& r : older["results"]) r.erase("memory_roof");
  const Report old_back = report_from_json(older);
  CHECK_FALSE(old_back.ceiling.read_bandwidth_GBps.has_value());
  CHECK_FALSE(old_back.results[0].model->memory_roof.has_value());
  CHECK(old_back.results[0].model->memory_roof_used() == MemoryRoof::dram);
  // Written back as absent (null), not as a roof the report never named.
  CHECK(to_json(old_back)["results"][0].value("memory_roof", json()).is_null());

  json unknown = first;
  unknown["results"][2]["memory_roof"] = "l2";
  CHECK(error_of(unknown) == "results[2].memory_roof: unknown memory roof 'l2'");
  json zero = first;
  zero["ceiling"]["read_bandwidth_GBps"] = 0;
  CHECK(error_of(zero) == "ceiling.read_bandwidth_GBps: must be positive, found 0");
}

// docs/report-schema.md: traffic.l2_model.revision names the model code a
// row's L2-aware figures came from (roofline/model/l2_aware_model.hpp);
// reports from before it were written by revision 1.
TEST_CASE("traffic.l2_model.revision round-trips, reads 1 where absent, and refuses others") {
  Report report = sample_report();
  const L2ModelInputs l2{62914560, 2, 132, {9, 0}, "device 0"};
  report.results[0] = model_row(fa1_wmma_kernel, seed_shape(true), report.ceiling,
                                FlopConvention::half, ComputeCapability{9, 0}, l2);
  const json written = to_json(report);
  CHECK(written["results"][0]["traffic"]["l2_model"]["revision"] == current_l2_model_revision);
  CHECK(report_from_json(written).results[0].model->l2_inputs->revision ==
        current_l2_model_revision);
  json old = written;
  old["results"][0]["traffic"]["l2_model"].erase("revision");
  CHECK(report_from_json(old).results[0].model->l2_inputs->revision == 1);
  json unknown = written;
  unknown["results"][0]["traffic"]["l2_model"]["revision"] = current_l2_model_revision + 1;
  CHECK(error_of(unknown) == fmt::format("results[0].traffic.l2_model.revision: {} is not a model "
                                         "revision (1 to {})",
                                         current_l2_model_revision + 1, current_l2_model_revision));
}

// traffic.l2_model.loop_kept_bytes: the GPU table's measured loop, which the
// interval's high bound reads; absent where the table has none.
TEST_CASE("traffic.l2_model.loop_kept_bytes round-trips with its source, absent where none") {
  Report report = sample_report();
  L2ModelInputs l2{62914560, 2, 132, {9, 0}, "device 0"};
  report.results[0] = model_row(fa1_wmma_kernel, seed_shape(true), report.ceiling,
                                FlopConvention::half, ComputeCapability{9, 0}, l2);
  CHECK_FALSE(to_json(report)["results"][0]["traffic"]["l2_model"].contains("loop_kept_bytes"));
  l2.loop_kept_bytes = 23068672;
  l2.loop_kept_source = "GPU table h100: results/h100/l2-loop-08875c8/";
  report.results[0] = model_row(fa1_wmma_kernel, seed_shape(true), report.ceiling,
                                FlopConvention::half, ComputeCapability{9, 0}, l2);
  const json written = to_json(report);
  CHECK(written["results"][0]["traffic"]["l2_model"]["loop_kept_bytes"] == 23068672.0);
  CHECK(report_from_json(written).results[0].model->l2_inputs == l2);
  json no_source = written;
  no_source["results"][0]["traffic"]["l2_model"].erase("loop_kept_source");
  CHECK(error_of(no_source) == "results[0].traffic.l2_model.loop_kept_source: missing");
  json zero = written;
  zero["results"][0]["traffic"]["l2_model"]["loop_kept_bytes"] = 0;
  CHECK(error_of(zero) == "results[0].traffic.l2_model.loop_kept_bytes: must be positive, found 0");
}
