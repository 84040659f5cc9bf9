#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/historical.hpp"
#include "roofline/report/report_json.hpp"
#include "sample_reports.hpp"

using namespace cfr;
using namespace cfr::evidence;
using nlohmann::json;

namespace {

std::vector<std::string> claims_of(const AuditResult& result, std::string_view where_prefix,
                                   std::string_view field) {
  std::vector<std::string> out;
  for (const Finding& f : result.findings) {
    if (f.kind == FindingKind::claim && f.where.starts_with(where_prefix) &&
        f.message.starts_with(field)) {
      out.push_back(f.message);
    }
  }
  return out;
}

json seed_json() {
  return to_json(seed_report("V100"));  // any valid report; the table itself is read below
}

std::string table_error(const std::function<void(json&)>& edit) {
  std::ifstream in(source_path("configs/historical/v0.4.0.json"));
  json document = json::parse(in);
  edit(document);
  try {
    parse_historical_table(document);
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the seed's §5.1/§5.2 table loads as 12 rows over V100, A100 and H100") {
  const HistoricalTable table = seed_table();
  CHECK(table.rows.size() == 12);
  CHECK(table.gpus() == std::vector<std::string>{"V100", "A100", "H100"});
  CHECK(table.kernel == "cuflash-attn-v0.4.0");
  CHECK(table.shape.batch == 1);  // §5.1: batch=1, heads=8, head_dim=64, causal FP16
  CHECK(table.shape.heads == 8);
  CHECK(table.shape.head_dim == 64);
  CHECK(table.shape.causal);
  CHECK(table.shape.dtype == DType::fp16);
  // §5.1, V100 N=16,384: 88.0 ms, 549.8 GFLOP, 3.1 TFLOPS, 3.68 GB, 670 GB/s, 74%;
  // §5.2: AI_eff 4.6, 7.6x below the ridge.
  const ClaimedFigures& v = table.rows[3].claimed;
  CHECK(table.rows[3].seq_len == 16384);
  CHECK(v.time_ms == 88.0);
  CHECK(v.flops_G == 549.8);
  CHECK(v.TFLOPs == 3.1);
  CHECK(v.traffic_GB == 3.68);
  CHECK(v.bandwidth_GBps == 670);
  CHECK(v.bandwidth_utilization_percent == 74);
  CHECK(v.ai_eff == 4.6);
  CHECK(v.ridge_distance == 7.6);
  CHECK(std::any_of(table.reasons.begin(), table.reasons.end(), [](const std::string& r) {
    return r.find("did not keep the corresponding nvprof/ncu raw artifacts") != std::string::npos;
  }));
}

TEST_CASE("a historical report is unauditable, keeps the printed columns and models each row") {
  const Report report = seed_report("H100");
  CHECK(report.provenance.source == ProvenanceSource::historical);
  CHECK_FALSE(report.provenance.auditable);
  CHECK(std::find(report.provenance.reasons.begin(), report.provenance.reasons.end(),
                  std::string(no_samples_reason)) != report.provenance.reasons.end());
  CHECK(report.ceiling.gpu == "h100");
  CHECK(report.ceiling.bandwidth_GBps == 3350);  // configs/gpus.json, H100 SXM5 datasheet
  REQUIRE(report.results.size() == 4);
  const ResultRow& row = report.results[0];
  CHECK(row.kernel == "cuflash-attn-v0.4.0");
  CHECK(row.tile == TileShape{64, 64});  // the seed's §4.1/§4.2: Br = Bc = 64 at d = 64
  CHECK(row.model->traffic.model == TrafficModelKind::kv_reload);
  CHECK(row.compute_unit == ComputeUnit::fp16_tensor);
  CHECK(row.timing->samples_ms.empty());
  CHECK(row.timing->summary.median == 0.11);  // §5.1, H100 N=1,024
  REQUIRE(row.claimed);
  CHECK(row.claimed->TFLOPs == 8.2);
  CHECK(row.device == std::nullopt);
}

TEST_CASE("claimed figures survive the report JSON round trip") {
  const json first = seed_json();
  const Report back = report_from_json(json::parse(first.dump()));
  CHECK(to_json(back) == first);
  CHECK(back.results[1].claimed->bandwidth_GBps == 630);
  json missing = first;
  missing["results"][0]["claimed"].erase("ai_eff");
  CHECK_THROWS_WITH(report_from_json(missing), "results[0].claimed.ai_eff: missing");
}

TEST_CASE("a table that is not historical, calls itself auditable or lacks a column is refused") {
  CHECK(table_error([](json& d) { d["provenance"]["auditable"] = true; }) ==
        "provenance.auditable: a table typed in from a document is never auditable");
  CHECK(table_error([](json& d) { d["provenance"]["source"] = "measured"; }) ==
        "provenance.source: expected 'historical', found 'measured'");
  CHECK(table_error([](json& d) { d["rows"][2].erase("time_ms"); }) == "rows[2].time_ms: missing");
  CHECK(table_error([](json& d) { d["rows"][5]["TFLOPs"] = -1; }) ==
        "rows[5].TFLOPs: must be positive, found -1");
  CHECK(table_error([](json& d) { d["schema"] = "x"; }) ==
        "schema: expected 'cuflash-roofline/historical/v1', found 'x'");
  // A row repeated (the same GPU and N) would make a report of two rows of one configuration.
  CHECK(table_error([](json& d) { d["rows"].push_back(d["rows"][0]); }) ==
        "rows[12]: repeats rows[0] (V100, N = 1024)");
}

TEST_CASE("a GPU the table has but the GPU table lacks is named with its row") {
  HistoricalTable table = seed_table();
  table.rows[0].gpu = "P100";
  const GpuTable gpus{"configs/gpus.json", {}};
  CHECK_THROWS_WITH(historical_report(table, "P100", gpus),
                    "rows[0].gpu: 'P100' is not in the GPU table configs/gpus.json (known: )");
  CHECK_THROWS_WITH(historical_report(table, "B200", gpus),
                    "the table has no rows for GPU 'B200' (it has P100, V100, A100, H100)");
}

TEST_CASE("audit lists the seed table's inconsistencies row by row") {
  const AuditResult v100 = audit_report(seed_report("V100"));
  CHECK_FALSE(v100.consistent());
  // §5.1 V100 N=16,384: 549.8 GFLOP / 88.0 ms = 6.25 TFLOP/s, printed 3.1, which is
  // FLOPs / 2 / time (3.12); at N=1,024 neither 5.12 nor 2.56 is the printed 2.1.
  const auto n16k = claims_of(v100, "results[3]", "TFLOPs");
  REQUIRE(n16k.size() == 1);
  CHECK(n16k[0] ==
        "TFLOPs: the table prints 3.1 TFLOP/s, but its own FLOPs / time is 549.8 GFLOP / 88 ms = "
        "6.25 TFLOP/s (printed / derived = 0.50); FLOPs / 2 / time = 3.12 matches it");
  const auto n1k = claims_of(v100, "results[0]", "TFLOPs");
  REQUIRE(n1k.size() == 1);
  CHECK(n1k[0].ends_with("FLOPs / 2 / time = 2.56 does not match it either"));

  // "Theoretical HBM traffic" 0.23 GB at N=1,024 against Q, K, V, O once: 4 x 8 x 1024 x 64 x 2
  // bytes = 4.19 MB, and against K/V reloaded per 64-row Q block.
  const auto traffic = claims_of(v100, "results[0]", "traffic_GB");
  REQUIRE(traffic.size() == 1);
  CHECK(traffic[0].find("compulsory (Q, K, V, O once) 4.19 MB") != std::string::npos);
  CHECK(traffic[0].find("kv_reload (Br=64, Bc=64) 20 MB") != std::string::npos);

  // Causal rows whose FLOPs are the dense 4·B·H·N²·d = 2.147 GFLOP at N=1,024.
  CHECK(claims_of(v100, "results[0]", "flops_G")
            .at(0)
            .starts_with("flops_G: 2.15 GFLOP is the dense count (2.147, every query-key pair) for "
                         "a row labelled "
                         "causal"));

  // Effective bandwidth: 0.23 GB / 0.42 ms = 548 GB/s holds at N=1,024; 0.92 GB / 5.82 ms =
  // 158 GB/s is not the printed 630 at N=4,096.
  CHECK(claims_of(v100, "results[0]", "bandwidth_GBps").empty());
  REQUIRE(claims_of(v100, "results[1]", "bandwidth_GBps").size() == 1);
  CHECK(claims_of(v100, "results[1]", "bandwidth_GBps")[0].find("= 158 GB/s") != std::string::npos);

  // AI_eff = TFLOPS / bandwidth holds (2.1 / 548 GB/s = 3.83); FLOPs / traffic (9.35) does not.
  const auto ai = claims_of(v100, "results[0]", "ai_eff");
  REQUIRE(ai.size() == 1);
  CHECK(ai[0].find("its own FLOPs / traffic is 2.15 GFLOP / 0.23 GB = 9.35") != std::string::npos);

  // §5.2's V100 distances imply a 35 FLOP/byte ridge: 31.4 / 0.9, the non-tensor fp16 peak.
  const auto ridge = claims_of(v100, "results[0]", "ridge_distance");
  REQUIRE(ridge.size() == 1);
  CHECK(ridge[0].ends_with("it is the fp16_simt ridge (31.4 TFLOP/s / 900 GB/s = 34.9)"));
  // The A100 and H100 distances do match their tensor-core ridges (153, 295).
  CHECK(claims_of(audit_report(seed_report("A100")), "results", "ridge_distance").empty());
  CHECK(claims_of(audit_report(seed_report("H100")), "results", "ridge_distance").empty());

  // Utilization = bandwidth / datasheet bandwidth holds in every row (548 / 900 = 61%).
  CHECK(claims_of(v100, "results", "bandwidth_utilization_percent").empty());
}

TEST_CASE(
    "two of the seed's twelve TFLOPS figures are FLOPs / 2 / time, as docs/model.md §6 says") {
  // The seed's v0.4.0 table, every GPU: audit's TFLOPs claims that end "matches it" are the rows
  // whose printed TFLOPS equals FLOPs / 2 / time within the printed rounding.
  std::vector<std::string> matching;
  int rows = 0;
  for (const char* gpu : {"V100", "A100", "H100"}) {
    const AuditResult result = audit_report(seed_report(gpu));
    for (int row = 0; row < 4; ++row, ++rows) {
      const std::string where = "results[" + std::to_string(row) + "]";
      for (const std::string& claim : claims_of(result, where, "TFLOPs")) {
        if (claim.ends_with("matches it")) matching.push_back(std::string(gpu) + " " + where);
      }
    }
  }
  CHECK(rows == 12);
  CHECK(matching == std::vector<std::string>{"V100 results[2]", "V100 results[3]"});
  // The two documents that state the count say the same.
  for (const char* doc : {"/docs/model.md", "/docs/evidence-tools.md"}) {
    INFO(doc);
    std::ifstream in(std::string(CFR_SOURCE_ROOT) + doc);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const bool says_two =
        text.find("FLOPs/2/time in two of twelve") != std::string::npos ||
        text.find("FLOPs/2 ÷ time only for V100 at\n  N = 8192 and 16384") != std::string::npos;
    CHECK(says_two);
  }
}
