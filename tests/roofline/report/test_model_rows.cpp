// Pins model_rows (roofline/report/model_rows.hpp): the rows of a sweep
// computed on several threads are model_row's, one by one and in order, and
// each L2-aware figure is its own full simulation's (no answer of the shared
// memo crosses rows); a plugin's byte count runs on the calling thread, and
// the first failing request's exception is the one rethrown. The L2 and SMs
// are the H200's (configs/gpus.json: 60 MiB, 2 partitions, 132 SMs).

#include <catch2/catch.hpp>

#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/model/kernel_catalog.hpp"
#include "roofline/model/l2_aware_model.hpp"
#include "roofline/model/own_byte_count.hpp"
#include "roofline/report/model_rows.hpp"
#include "roofline/report/report_json.hpp"
#include "tests/roofline/a100_ceiling.hpp"

using namespace cfr;

namespace {

const L2ModelInputs h200{62914560, 2, 132, {9, 0}, "GPU table h200"};

std::vector<ResultRow> rows_of(const std::vector<ModelRowRequest>& requests, unsigned threads) {
  return model_rows(requests, a100_ceiling(), FlopConvention::exact, ComputeCapability{9, 0}, h200,
                    threads);
}

// Answers a fixed count, or throws `refusal` where it is set; notes the
// threads that asked.
class TestCount : public OwnByteCount {
 public:
  explicit TestCount(std::string refusal = "") : refusal_(std::move(refusal)) {}
  ByteCount hbm_bytes(const AttentionProblem&) const override {
    threads.push_back(std::this_thread::get_id());
    if (!refusal_.empty()) throw std::runtime_error(refusal_);
    return 1e9;
  }
  mutable std::vector<std::thread::id> threads;

 private:
  std::string refusal_;
};

// fa1_scalar under another name, counting its bytes with `count` (a plugin's
// kernel: traffic `plugin`, not in the catalog).
KernelDescription plugin_kernel(const OwnByteCount* count) {
  KernelDescription kernel = fa1_scalar_kernel;
  kernel.name = "test_plugin";
  kernel.traffic = TrafficModelKind::plugin;
  kernel.own_bytes = count;
  return kernel;
}

}  // namespace

TEST_CASE("model_rows on 4 threads: model_row's rows in order, each its own full simulation") {
  // fp16 and bf16 of a shape are adjacent: two threads want one simulation at once.
  std::vector<ModelRowRequest> requests;
  for (const KernelDescription& kernel : kernel_catalog) {
    if (kernel.direction != Direction::forward) continue;
    for (std::int64_t n : {1024, 4096}) {
      for (std::int64_t d : {64, 128}) {
        for (bool causal : {false, true}) {
          for (DType dtype : {DType::fp16, DType::bf16}) {
            requests.push_back({&kernel, {1, 8, n, d, causal, dtype}});
          }
        }
      }
    }
  }
  const std::vector<ResultRow> parallel = rows_of(requests, 4);
  REQUIRE(parallel.size() == requests.size());
  int simulated = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const KernelDescription& kernel = *requests[i].kernel;
    const AttentionProblem& problem = requests[i].problem;
    INFO(kernel.name << " N " << problem.seq_len << " d " << problem.head_dim << " causal "
                     << problem.causal << " " << to_string(problem.dtype));
    const ResultRow serial = model_row(kernel, problem, a100_ceiling(), FlopConvention::exact,
                                       ComputeCapability{9, 0}, h200);
    CHECK(to_json(parallel[i]) == to_json(serial));
    if (!parallel[i].model || !parallel[i].model->dram_interval) continue;
    const auto full = l2_aware_dram_simulated(kernel, problem, h200);
    const auto interval = l2_aware_interval_simulated(kernel, problem, h200);
    REQUIRE(full);
    REQUIRE(interval);
    CHECK(*parallel[i].model->bytes_of(TrafficModelKind::l2_aware) == full->bytes());
    CHECK(*parallel[i].model->dram_interval == *interval);
    ++simulated;
  }
  CHECK(simulated >= 64);
}

TEST_CASE("model_rows: a plugin's count on the calling thread; the first failure in order") {
  const AttentionProblem problem{1, 8, 1024, 64, false, DType::fp16};
  const TestCount count;
  const KernelDescription plugin = plugin_kernel(&count);
  const std::vector<ModelRowRequest> requests(8, {&plugin, problem});
  const std::vector<ResultRow> rows = rows_of(requests, 4);
  REQUIRE(rows.size() == 8);
  CHECK(rows[7].model->traffic.bytes == 1e9);
  REQUIRE(count.threads.size() == 8);
  for (const std::thread::id id : count.threads) CHECK(id == std::this_thread::get_id());

  // Request 1 (a plugin's, on this thread, after the others) fails first in
  // order; request 2 (traffic `plugin` without a count, on a worker) fails too.
  const TestCount refusing("count refused");
  const KernelDescription refused = plugin_kernel(&refusing);
  const KernelDescription uncounted = plugin_kernel(nullptr);
  const std::vector<ModelRowRequest> failing{{&fa2_mma_kernel, problem},
                                             {&refused, problem},
                                             {&uncounted, problem},
                                             {&fa2_mma_kernel, problem}};
  CHECK_THROWS_WITH(rows_of(failing, 4), "count refused");
  CHECK_THROWS_WITH(rows_of({failing[0], failing[2]}, 4),
                    "traffic model 'plugin' needs the kernel's own byte count");
}
