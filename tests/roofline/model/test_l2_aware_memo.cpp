// Pins the memo of l2_aware_dram: a row that shares its simulation with
// another (fp16 and bf16, B x H of equal product) gets, to the last bit, the
// DRAM bytes of its own full simulation. The shapes are every row of the
// committed profiled reports (results/h200/profile/*.json) and the default
// axes (N 1024..16384, d 32/64/128, causal and not) on the profiled H200's
// L2 and SMs (the device record of results/h200/profile/default.json).

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

Report read_report(const std::filesystem::path& path) {
  return report_from_json(nlohmann::json::parse(cfr::test::read_source_text(path)));
}

L2ModelInputs h200_inputs() {
  const Report report = read_report(CFR_SOURCE_ROOT "/results/h200/profile/default.json");
  REQUIRE(!report.devices.empty());
  return l2_model_inputs(report.devices.front());
}

// The full simulation of `problem` equals the memo's answer, field by field.
void check_same(const KernelDescription& kernel, const AttentionProblem& problem,
                const L2ModelInputs& inputs) {
  INFO(kernel.name << " B " << problem.batch << " H " << problem.heads << " N " << problem.seq_len
                   << " d " << problem.head_dim << " causal " << problem.causal << " "
                   << to_string(problem.dtype));
  const auto full = l2_aware_dram_simulated(kernel, problem, inputs);
  const auto memo = l2_aware_dram(kernel, problem, inputs);
  REQUIRE(full.has_value() == memo.has_value());
  if (!full) return;
  CHECK(memo->read_bytes == full->read_bytes);
  CHECK(memo->written_bytes == full->written_bytes);
  CHECK(memo->retained_dirty_bytes == full->retained_dirty_bytes);
  REQUIRE(memo->launches.size() == full->launches.size());
}

}  // namespace

TEST_CASE("the memo equals the full simulation on every committed profiled row") {
  int rows = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(CFR_SOURCE_ROOT "/results/h200/profile")) {
    if (!cfr::test::is_json_file(entry.path())) continue;
    const Report report = read_report(entry.path());
    for (const ResultRow& row : report.results) {
      const KernelDescription* kernel = catalog_revision(row.kernel, row.kernel_revision);
      if (kernel == nullptr || !row.model || !row.model->l2_inputs) continue;
      check_same(*kernel, row.problem, *row.model->l2_inputs);
      ++rows;
    }
  }
  CHECK(rows >= 100);
}

TEST_CASE("a bf16 row and a row of another B x H share the fp16, B = 1 simulation exactly") {
  const L2ModelInputs inputs = h200_inputs();
  for (const KernelDescription& kernel : kernel_catalog) {
    if (kernel.direction != Direction::forward || kernel.traffic == TrafficModelKind::split_kv) {
      continue;
    }
    for (std::int64_t n = 1024; n <= 16384; n *= 2) {
      for (std::int64_t d : {32, 64, 128}) {
        for (bool causal : {false, true}) {
          // The memo is filled by the fp16, B = 1, H = 8 row first; the other
          // rows are then answered from it, and must equal their own runs.
          (void)l2_aware_dram(kernel, {1, 8, n, d, causal, DType::fp16}, inputs);
          check_same(kernel, {1, 8, n, d, causal, DType::bf16}, inputs);
          check_same(kernel, {2, 4, n, d, causal, DType::fp16}, inputs);
          check_same(kernel, {4, 2, n, d, causal, DType::bf16}, inputs);
        }
      }
    }
  }
}

// fa2_decode's revisions 1 and 2 launch the same tile on a paged cache but
// plan different splits (revision 2's page table): each gets its own
// simulation through the memo, whichever runs first.
TEST_CASE("the memo keeps fa2_decode's two revisions apart on a paged cache") {
  const L2ModelInputs inputs = h200_inputs();
  AttentionProblem paged{1, 32, 1, 128, false, DType::fp16, 32768, 8, 16};
  const KernelDescription* v1 = fa2_decode_kernel.at_revision(1);
  REQUIRE(v1 != nullptr);
  const auto first = l2_aware_dram(*v1, paged, inputs);
  const auto second = l2_aware_dram(fa2_decode_kernel, paged, inputs);
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->read_bytes != second->read_bytes);
  check_same(*v1, paged, inputs);
  check_same(fa2_decode_kernel, paged, inputs);
}
