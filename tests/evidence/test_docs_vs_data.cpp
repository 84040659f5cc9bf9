// Numbers docs/perf-notes.md states about the committed H200 sweeps,
// recomputed from the reports' raw samples (issue 12: "a test or a generated
// section wherever a doc states a number").
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/statistics.hpp"
#include "roofline/evidence/compare.hpp"
#include "roofline/model/traffic_model.hpp"
#include "roofline/profile/profile_checks.hpp"
#include "roofline/report/report_json.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

std::string read_text(const std::string& relative) {
  return cfr::test::read_source_text(std::string(CFR_SOURCE_ROOT) + "/" + relative);
}

struct Noise {
  int rows = 0;
  int over_1_3_percent = 0;
  int time_cap = 0;
  double worst_percent = 0;
  std::string worst_row;
};

Noise noise_of(const std::string& report_path) {
  const Report report = report_from_json(nlohmann::json::parse(read_text(report_path)));
  Noise noise;
  for (const ResultRow& row : report.results) {
    if (!row.timing) continue;
    ++noise.rows;
    const double percent = 100 * summarize(row.timing->samples_ms).relative_stdev();
    if (percent > 1.3) ++noise.over_1_3_percent;
    if (row.timing->stop_reason == "time cap") ++noise.time_cap;
    if (percent > noise.worst_percent) {
      noise.worst_percent = percent;
      noise.worst_row =
          fmt::format("{} d {} N {}", row.kernel, row.problem.head_dim, row.problem.seq_len);
    }
  }
  return noise;
}

// The doc's text with each line break, and the indent after it, folded to one
// space: a sentence reads the same wherever the lines of a list item break.
std::string folded(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    out += ' ';
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
  }
  return out;
}

}  // namespace

TEST_CASE("perf-notes' noise figures of the version 1 sweeps are the reports' own") {
  const Noise causal = noise_of("results/h200/v1/sweep-causal.json");
  const Noise non_causal = noise_of("results/h200/v1/sweep-noncausal.json");
  CHECK(non_causal.over_1_3_percent == 0);
  const std::string notes = folded(read_text("docs/perf-notes.md"));
  const std::string expected = fmt::format(
      "is under 1 % in every non-causal row (at most {:.2f} %); in the causal report {} of {} rows "
      "exceed 1.3 % (at most {:.2f} %, {}) and {} of {} stopped on the time cap",
      non_causal.worst_percent, causal.over_1_3_percent, causal.rows, causal.worst_percent,
      "fa1_wmma d 64 N 4096", causal.time_cap, causal.rows);
  INFO(expected);
  CHECK(non_causal.worst_percent < 1.0);
  CHECK(causal.worst_row == "fa1_wmma d 64 N 4096");
  CHECK(notes.find(expected) != std::string::npos);
}

TEST_CASE("evidence-tools' --by shape geomeans are those of the committed peers files") {
  const auto report = [](const std::string& path) {
    return report_from_json(nlohmann::json::parse(read_text(path)));
  };
  evidence::CompareOptions by_shape;
  by_shape.by_shape = true;
  const evidence::Comparison c =
      evidence::compare_reports(report("results/h200/peers/torch-sdpa.json"),
                                report("results/h200/peers/sweep-peer-axes.json"), by_shape);
  std::string flash_line;
  for (const evidence::PairingMean& pairing : evidence::geometric_means_by_pairing(c)) {
    if (pairing.kernel == "fa2_mma" && pairing.base_kernel == "torch_sdpa_flash") {
      flash_line = pairing.kernel + " over " + pairing.base_kernel + ": " +
                   evidence::render_geometric_mean(pairing.mean);
    }
  }
  const evidence::GeometricMean all = evidence::geometric_mean({c});
  const std::string doc = folded(read_text("docs/evidence-tools.md"));
  INFO(flash_line);
  CHECK(doc.find("that line reads `" + flash_line + "`") != std::string::npos);
  CHECK(doc.find(fmt::format("the mean over all {} pairings is {:.4f}", all.rows, *all.ratio)) !=
        std::string::npos);
}

namespace {

// The committed ceilings report's figures by name: value, fraction of the
// datasheet, and the SM clock they were measured at.
struct CeilingFigure {
  double value = 0;
  double fraction = 0;
  double clock_MHz = 0;
};

std::map<std::string, CeilingFigure> committed_ceilings() {
  const nlohmann::json document = nlohmann::json::parse(read_text("results/h200/ceilings.json"));
  std::map<std::string, CeilingFigure> figures;
  for (const nlohmann::json& f : document["figures"]) {
    figures[f["figure"].get<std::string>()] = {
        f["value"].get<double>(),
        f["fraction_of_datasheet"].is_number() ? f["fraction_of_datasheet"].get<double>() : 0.0,
        f["sm_clock_MHz"].get<double>()};
  }
  return figures;
}

}  // namespace

TEST_CASE("perf-notes' ceilings table is the committed ceilings report, rounded") {
  auto c = committed_ceilings();
  const std::string notes = read_text("docs/perf-notes.md");
  const auto& mma16 = c["fp16_tensor_mma"];
  const std::vector<std::string> rows{
      fmt::format(
          "| DRAM, copy kernel (read + written) | {:.0f} GB/s | 4800 GB/s | {:.2f} | {:.0f} MHz |",
          c["dram_bandwidth"].value, c["dram_bandwidth"].fraction, c["dram_bandwidth"].clock_MHz),
      fmt::format(
          "| DRAM, `cudaMemcpyAsync` (reference) | {:.0f} GB/s | 4800 GB/s | {:.2f} | {:.0f} |",
          c["dram_bandwidth_memcpy"].value, c["dram_bandwidth_memcpy"].fraction,
          c["dram_bandwidth_memcpy"].clock_MHz),
      fmt::format("| fp16 tensor, cuBLAS 8192³ | {:.1f} TFLOP/s | 989.4 | {:.2f} | {:.0f} |",
                  c["fp16_tensor_cublas"].value, c["fp16_tensor_cublas"].fraction,
                  c["fp16_tensor_cublas"].clock_MHz),
      fmt::format("| bf16 tensor, cuBLAS 8192³ | {:.1f} TFLOP/s | 989.4 | {:.2f} | {:.0f} |",
                  c["bf16_tensor_cublas"].value, c["bf16_tensor_cublas"].fraction,
                  c["bf16_tensor_cublas"].clock_MHz),
      fmt::format("| fp16 / bf16 tensor, `mma.sync` | {:.0f} / {:.0f} TFLOP/s | 989.4 | {:.2f} "
                  "(Hopper's full rate needs `wgmma`) | {:.0f} |",
                  mma16.value, c["bf16_tensor_mma"].value, mma16.fraction, mma16.clock_MHz),
      fmt::format("| fp32 SIMT, FFMA | {:.1f} TFLOP/s | 67.0 | {:.2f} | {:.0f} |",
                  c["fp32_simt_fma"].value, c["fp32_simt_fma"].fraction,
                  c["fp32_simt_fma"].clock_MHz),
      fmt::format("| fp16 SIMT, HFMA2 | {:.1f} TFLOP/s | 133.8 | {:.2f} | {:.0f} |",
                  c["fp16_simt_hfma2"].value, c["fp16_simt_hfma2"].fraction,
                  c["fp16_simt_hfma2"].clock_MHz),
      fmt::format("| L2 (working set L2/4) | {:.0f} GB/s | — | — | {:.0f} |",
                  c["l2_bandwidth"].value, c["l2_bandwidth"].clock_MHz),
  };
  for (const std::string& row : rows) {
    INFO(row);
    CHECK(notes.find(row) != std::string::npos);
  }
  const std::string memcpy_sentence = fmt::format(
      "Our copy kernel reaches {:.2f} of the tool's own `cudaMemcpyAsync` figure ({:.0f} against "
      "{:.0f} GB/s,",
      c["dram_bandwidth"].value / c["dram_bandwidth_memcpy"].value, c["dram_bandwidth"].value,
      c["dram_bandwidth_memcpy"].value);
  INFO(memcpy_sentence);
  CHECK(folded(notes).find(memcpy_sentence) != std::string::npos);
}

TEST_CASE("perf-notes' two numbers use the committed ceilings and the tool's models") {
  // The seed's headline shape: B 1, H 8, N 16384, d 64, fp16, forward, non-causal.
  auto c = committed_ceilings();
  const AttentionProblem headline{1, 8, 16384, 64, false, DType::fp16};
  const double flops = 4.0 * 8 * 16384.0 * 16384.0 * 64;
  const double compulsory_bytes = 4.0 * 8 * 16384 * 64 * 2;  // Q, K, V, O once
  const double kv_reload_bytes =
      estimate_traffic(headline, Direction::forward, TrafficModelKind::kv_reload, {64, 64}).bytes;
  const std::string notes = read_text("docs/perf-notes.md");
  const std::vector<std::string> cells{
      fmt::format("| {:.1f} GFLOP | fp16 tensor 989.4 TFLOP/s | {:.3f} ms | cuBLAS fp16 {:.1f} "
                  "TFLOP/s | {:.3f} ms |",
                  flops / 1e9, flops / 989.4e12 * 1e3, c["fp16_tensor_cublas"].value,
                  flops / (c["fp16_tensor_cublas"].value * 1e12) * 1e3),
      fmt::format("| 67.0 TFLOP/s | {:.2f} ms | FFMA chains {:.1f} TFLOP/s | {:.2f} ms |",
                  flops / 67e12 * 1e3, c["fp32_simt_fma"].value,
                  flops / (c["fp32_simt_fma"].value * 1e12) * 1e3),
      fmt::format(
          "| {:.1f} MB (+0.5 MB) | 4800 GB/s | {:.3f} ms | copy kernel {:.0f} GB/s | {:.3f} "
          "ms |",
          compulsory_bytes / 1e6, compulsory_bytes / 4800e9 * 1e3, c["dram_bandwidth"].value,
          compulsory_bytes / (c["dram_bandwidth"].value * 1e9) * 1e3),
      fmt::format("| {:.3f} GB | 4800 GB/s | {:.2f} ms | {:.0f} GB/s | {:.2f} ms |",
                  kv_reload_bytes / 1e9, kv_reload_bytes / 4800e9 * 1e3, c["dram_bandwidth"].value,
                  kv_reload_bytes / (c["dram_bandwidth"].value * 1e9) * 1e3),
  };
  for (const std::string& cell : cells) {
    INFO(cell);
    CHECK(notes.find(cell) != std::string::npos);
  }
}

namespace {

// Every row of results/h200/profile/*.json that carries a profile.
std::vector<nlohmann::json> profiled_rows() {
  std::vector<nlohmann::json> rows;
  const std::filesystem::path folder = std::string(CFR_SOURCE_ROOT) + "/results/h200/profile";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const nlohmann::json report = nlohmann::json::parse(
        read_text("results/h200/profile/" + entry.path().filename().string()));
    for (const nlohmann::json& row : report["results"]) {
      if (row.contains("profile") && row["profile"].is_object()) rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("perf-notes' timing check is the profiled reports' own") {
  int rows = 0;
  int within = 0;
  int by_cycles = 0;
  double low = 1e9;
  double high = 0;
  double bwd_low = 1e9;
  double bwd_high = 0;
  std::string low_row;
  std::string high_row;
  const auto number = [](const nlohmann::json& checks, const char* key) {
    return checks.contains(key) && checks[key].is_number()
               ? std::optional<double>(checks[key].get<double>())
               : std::nullopt;
  };
  for (const nlohmann::json& row : profiled_rows()) {
    const nlohmann::json& checks = row["profile"]["checks"];
    // Cycles where the row has them, seconds for reports before the counters.
    const auto check = timing_check(number(checks, "process_cycle_ratio"),
                                    number(checks, "cycle_ratio"), number(checks, "timing_ratio"));
    if (!check) continue;
    const double ratio = check->ratio;
    const std::string name = fmt::format("{} d {} N {}", row["kernel"].get<std::string>(),
                                         row["head_dim"].get<int>(), row["seq_len"].get<int>());
    ++rows;
    if (check->basis != "seconds") ++by_cycles;
    if (std::abs(ratio - 1) <= 0.03) ++within;
    if (ratio < low) low = ratio, low_row = name;
    if (ratio > high) high = ratio, high_row = name;
    if (row["kernel"] == "fa1_bwd") {
      bwd_low = std::min(bwd_low, ratio);
      bwd_high = std::max(bwd_high, ratio);
    }
  }
  const std::string expected = fmt::format(
      "{} of {} rows have our median within 3 % of ncu's launch, by SM cycles on {} rows and by "
      "`gpu__time_duration.sum` on the {} profiled before the cycle counters; ours ÷ ncu's "
      "runs from {:.3f} ({}) to {:.3f} ({}). fa1_bwd, up to 2.23× in the a54895c run, is within "
      "{:.3f}–{:.3f} in this one",
      within, rows, by_cycles, rows - by_cycles, low, low_row, high, high_row, bwd_low, bwd_high);
  INFO(expected);
  CHECK(folded(read_text("docs/perf-notes.md")).find(expected) != std::string::npos);
}

TEST_CASE("perf-notes' torch flash causal ratio is the peers report's own") {
  const nlohmann::json report =
      nlohmann::json::parse(read_text("results/h200/peers/torch-sdpa.json"));
  std::map<std::pair<std::string, bool>, double> median;
  for (const nlohmann::json& row : report["results"]) {
    if (row["kernel"] == "torch_sdpa_flash" && row["seq_len"] == 8192 && row["head_dim"] == 128 &&
        row["status"] == "ok") {
      median[{row["dtype"].get<std::string>(), row["causal"].get<bool>()}] =
          summarize(row["timing"]["samples_ms"].get<std::vector<double>>()).median;
    }
  }
  REQUIRE(median.size() == 4);
  const std::string expected =
      fmt::format("causal {:.3f} of non-causal at N 8192 d128 in fp16, {:.3f} in bf16",
                  median[{"fp16", true}] / median[{"fp16", false}],
                  median[{"bf16", true}] / median[{"bf16", false}]);
  INFO(expected);
  CHECK(folded(read_text("docs/perf-notes.md")).find(expected) != std::string::npos);
}

TEST_CASE("perf-notes' version 1 -> 2 headline times are the four sweep reports' own") {
  // Median of the raw samples at fwd fp16 B1 H8 N16384 d64 (fa1_bwd: its backward), per kernel.
  const auto medians = [](const std::string& path) {
    const Report report = report_from_json(nlohmann::json::parse(read_text(path)));
    std::map<std::string, double> out;
    for (const ResultRow& row : report.results) {
      if (row.timing && row.problem.seq_len == 16384 && row.problem.head_dim == 64 &&
          row.problem.dtype == DType::fp16) {
        out[row.kernel] = summarize(row.timing->samples_ms).median;
      }
    }
    return out;
  };
  const auto v1_nc = medians("results/h200/v1/sweep-noncausal.json");
  const auto v1_c = medians("results/h200/v1/sweep-causal.json");
  const auto v2_nc = medians("results/h200/sweep-noncausal.json");
  const auto v2_c = medians("results/h200/sweep-causal.json");
  std::string line;
  for (const char* kernel : {"naive", "fa1_scalar", "fa1_wmma", "fa1_bwd"}) {
    line += fmt::format("{} {:.3f} / {:.3f} → {:.3f} / {:.3f}; ", kernel, v1_nc.at(kernel),
                        v1_c.at(kernel), v2_nc.at(kernel), v2_c.at(kernel));
  }
  CHECK(v1_nc.count("fa2_mma") == 0);
  line += fmt::format("fa2_mma (new) {:.3f} / {:.3f}", v2_nc.at("fa2_mma"), v2_c.at("fa2_mma"));
  INFO(line);
  CHECK(folded(read_text("docs/perf-notes.md")).find(line) != std::string::npos);
}

TEST_CASE("perf-notes' fa2_mma bank-conflict share is the profiled reports' own") {
  double worst = 0;
  std::string worst_row;
  for (const nlohmann::json& row : profiled_rows()) {
    if (row["kernel"] != "fa2_mma") continue;
    std::map<std::string, double> counters;
    for (const nlohmann::json& c : row["profile"]["counters"]) {
      if (c["value"].is_null()) continue;  // unavailable on the chip, with its note
      counters[c["metric"].get<std::string>()] = c["value"].get<double>();
    }
    const double share = counters.at("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum") /
                         counters.at("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
    if (share > worst) {
      worst = share;
      worst_row = fmt::format("d {} N {}{}", row["head_dim"].get<int>(), row["seq_len"].get<int>(),
                              row["causal"] == true ? " causal" : "");
    }
  }
  const std::string expected = fmt::format(
      "bank conflicts are at most {:.3f} % of its shared-memory wavefronts", 100 * worst);
  INFO(expected << " (" << worst_row << ")");
  const std::string notes = folded(read_text("docs/perf-notes.md"));
  CHECK(notes.find(expected) != std::string::npos);
  CHECK(notes.find(worst_row + "; `test_docs_vs_data`") != std::string::npos);
}

// fa3_bwd's judgements against torch's flash backward (results/h100/backward-*,
// each our sweep and torch's report from one device call), as perf-notes
// quotes them: the geometric mean of fa3_bwd over torch_sdpa_flash per shape.
TEST_CASE("perf-notes' fa3_bwd ratios to torch flash are the committed reports' own") {
  const auto report = [](const std::string& path) {
    return report_from_json(nlohmann::json::parse(read_text(path)));
  };
  const auto fa3_over_flash = [&](const std::string& dir, const std::string& peers,
                                  const std::string& ours) {
    evidence::CompareOptions by_shape;
    by_shape.by_shape = true;
    const evidence::Comparison c =
        evidence::compare_reports(report(dir + peers), report(dir + ours), by_shape);
    for (const evidence::PairingMean& pairing : evidence::geometric_means_by_pairing(c)) {
      if (pairing.kernel == "fa3_bwd" && pairing.base_kernel == "torch_sdpa_flash") {
        REQUIRE(pairing.mean.ratio);
        return *pairing.mean.ratio;
      }
    }
    FAIL("no fa3_bwd over torch_sdpa_flash pairing in " << dir);
    return 0.0;
  };
  const std::string doc = folded(read_text("docs/perf-notes.md"));
  const std::string h100 = "results/h100/";
  // Each sentence of perf-notes with its ratio's place ({}), and the call it quotes: the
  // folder under results/h100/, torch's report and ours.
  struct Quote {
    const char* sentence;
    const char* dir;
    const char* peers;
    const char* ours;
  };
  constexpr Quote quotes[] = {
      {"fa3_bwd takes {:.4f} of flash's backward time", "backward-91cfe71/",
       "torch-sdpa-backward.json", "sweep-fa2-bwd.json"},
      {"geomean {:.4f}, 8 of 8 FASTER", "backward-other-2480e86/", "torch-sdpa-backward-other.json",
       "sweep-bwd-other.json"},
      {"Issue 19's 24 shapes: **{:.4f} of flash's time**", "backward-6c13e62/",
       "torch-sdpa-backward.json", "sweep-fa2-bwd.json"},
      {"GQA against torch: {:.4f} of flash's time", "backward-gqa-64287a2/",
       "torch-sdpa-backward-gqa.json", "sweep-bwd-gqa.json"},
      {"Issue 19's axes in that call: **{:.4f} of flash's time**", "backward-42eae12/",
       "torch-sdpa-backward.json", "sweep-fa2-bwd.json"},
      {"Against flash, same call: **fa3_bwd {:.4f}** of flash's time", "backward-81ce447/",
       "torch-sdpa-backward.json", "sweep-fa2-bwd.json"},
      {"GQA 32/8: **fa3_bwd {:.4f}** of flash's time", "backward-gqa-81ce447/",
       "torch-sdpa-backward-gqa.json", "sweep-bwd-gqa.json"},
      {"Against flash, the submitted code: fa3_bwd {:.4f}** of flash's time", "backward-454f090/",
       "torch-sdpa-backward.json", "sweep-fa2-bwd.json"},
      {"GQA 32/8** (`backward-gqa-454f090/`): **fa3_bwd {:.4f}**", "backward-gqa-454f090/",
       "torch-sdpa-backward-gqa.json", "sweep-bwd-gqa.json"},
      {"**fa3_bwd {:.4f}**, 8 of 8 FASTER (0.7947 before)", "backward-other-454f090/",
       "torch-sdpa-backward-other.json", "sweep-bwd-other.json"},
  };
  std::vector<std::string> expected;
  for (const Quote& quote : quotes) {
    expected.push_back(fmt::format(fmt::runtime(quote.sentence),
                                   fa3_over_flash(h100 + quote.dir, quote.peers, quote.ours)));
  }
  for (const std::string& sentence : expected) {
    INFO(sentence);
    CHECK(doc.find(sentence) != std::string::npos);
  }
}
