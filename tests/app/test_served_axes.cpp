#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "tests/builtin_kernels.hpp"

// The served-shape axes of `model` and `sweep` (issue 25): --q-lens and
// --kv-lens apart, --kv-heads, --page-size, --preset (configs/models.json).

using nlohmann::json;

namespace {

json model_json(const std::string& arguments) {
  const CliResult r = run_cli("model --gpu h200 " + arguments + " --json -");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

std::string refusal(const std::string& arguments) {
  const CliResult r = run_cli("model " + arguments);
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  return r.err;
}

}  // namespace

TEST_CASE("served axes: a preset's decode step over key lengths, pages, query tokens") {
  const json doc =
      model_json("--preset llama3-8b --q-lens 1,4 --kv-lens 4096,32768 --page-size 0,16");
  // `all`: only the kernels that take these shapes (fa2_mma: contiguous only).
  std::set<std::tuple<std::string, int, int, int>> rows;
  for (const json& row : doc["results"]) {
    CHECK(row["heads"] == 32);
    CHECK(row["kv_heads"] == 8);
    CHECK(row["head_dim"] == 128);
    CHECK(row["status"] == "ok");
    const int page = row.value("page_size", 0);
    rows.insert({row["kernel"], row["seq_len"], row["kv_len"], page});
    if (row["kernel"] == "fa2_decode") CHECK(row["traffic"]["model"] == "split_kv");
  }
  // 2 query lengths x 2 key lengths x 2 page sizes, each with the kernels that take it
  // (tests/builtin_kernels.hpp): fa2_decode with both page sizes, fa2_mma contiguous.
  std::size_t planned = 0;
  for (const int q_len : {1, 4}) {
    for (const int kv_len : {4096, 32768}) {
      for (const int page_size : {0, 16}) {
        const cfr::AttentionProblem problem{.heads = 32,
                                            .seq_len = q_len,
                                            .head_dim = 128,
                                            .kv_len = kv_len,
                                            .kv_heads = 8,
                                            .page_size = page_size};
        planned += cfr::test::kernels_planned(problem, false).size();
      }
    }
  }
  CHECK(rows.size() == planned);
  CHECK(rows.count({"fa2_decode", 4, 32768, 16}) == 1);
  CHECK(rows.count({"fa2_mma", 1, 4096, 0}) == 1);
  CHECK(rows.count({"fa2_mma", 1, 4096, 16}) == 0);
}

TEST_CASE("served axes: --kv-lens alone is a one-token decode; --q-lens alone is square") {
  const json decode = model_json("--kv-lens 2048 --kernels fa2_decode --head-dims 128");
  REQUIRE(decode["results"].size() == 1);
  CHECK(decode["results"][0]["seq_len"] == 1);
  CHECK(decode["results"][0]["kv_len"] == 2048);
  const json square = model_json("--q-lens 512 --kernels fa2_mma");
  CHECK(square["results"][0]["seq_len"] == 512);
  CHECK_FALSE(square["results"][0].contains("kv_len"));
}

TEST_CASE("served axes: a kernel named for a shape it does not take gets a skipped row") {
  const json doc = model_json("--kv-lens 4096 --kv-heads 2 --kernels fa1_wmma");
  REQUIRE(doc["results"].size() == 1);
  CHECK(doc["results"][0]["status"] == "skipped");
  CHECK(doc["results"][0]["reason"] ==
        "fa1_wmma takes as many keys as queries (kv_len 4096 != seq_len 1)");
  const json causal = model_json("--q-lens 8 --kv-lens 4 --causal --kernels fa2_mma");
  CHECK(causal["results"][0]["status"] == "skipped");
  CHECK(causal["results"][0]["reason"].get<std::string>().find("bottom-right") !=
        std::string::npos);
}

// fa2_bwd takes GQA, fa2_bwd_2d (square only) does not: named, it gets a
// skipped row naming the shape; `all` with --backward plans it no row.
TEST_CASE("served axes: a backward kernel without GQA is skipped on a GQA shape, with the reason") {
  const std::string gqa = "--heads 32 --kv-heads 8 --seq-lens 4096 --head-dims 128 ";
  const json named = model_json(gqa + "--kernels fa2_bwd,fa2_bwd_2d");
  REQUIRE(named["results"].size() == 2);
  CHECK(named["results"][0]["kernel"] == "fa2_bwd");
  CHECK(named["results"][0]["status"] == "ok");
  CHECK(named["results"][1]["kernel"] == "fa2_bwd_2d");
  CHECK(named["results"][1]["status"] == "skipped");
  CHECK(named["results"][1]["reason"] ==
        "fa2_bwd_2d takes as many K/V heads as query heads (kv_heads 8 != heads 32)");
  const json all = model_json(gqa + "--backward");
  std::set<std::string> planned;
  for (const json& row : all["results"]) planned.insert(row["kernel"].get<std::string>());
  CHECK(planned.count("fa2_bwd") == 1);
  CHECK(planned.count("fa2_bwd_2d") == 0);
  const json square = model_json("--seq-lens 4096 --head-dims 128 --kernels fa2_bwd_2d");
  CHECK(square["results"][0]["status"] == "ok");
}

TEST_CASE("served axes: bad values fail with one line naming them") {
  CHECK(refusal("--heads 32 --kv-heads 5").find("--kv-heads: 5 does not divide --heads 32") !=
        std::string::npos);
  CHECK(refusal("--seq-lens 1024 --kv-lens 4096").find("--seq-lens sets both lengths") !=
        std::string::npos);
  CHECK(refusal("--preset llama3-8b --heads 8").find("--preset llama3-8b sets --heads") !=
        std::string::npos);
  CHECK(refusal("--preset gpt5").find("unknown model 'gpt5'") != std::string::npos);
  CHECK(refusal("--page-size 12").find("--page-size: '12' is not 0") != std::string::npos);
  CHECK(refusal("--kv-lens ''").find("--kv-lens") != std::string::npos);
}
