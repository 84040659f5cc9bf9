// Class 2 of issue 12: unbounded work. Every input that could ask for work or
// memory without end is refused up front, with the count and the cap, in
// bounded time and memory (each run here is killed past its time limit and
// has a 1 GiB address space).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "adversarial.hpp"
#include "tests/builtin_kernels.hpp"

using nlohmann::json;

namespace {

CliLimits tight(int seconds = 10) {
  CliLimits limits;
  limits.timeout = std::chrono::seconds(seconds);
  limits.address_space_bytes = std::size_t{1} << 30;
  return limits;
}

json historical_table_with(std::int64_t seq_len) {
  json table = committed("configs/historical/v0.4.0.json");
  json row = table["rows"][4];  // A100, N = 1024
  row["seq_len"] = seq_len;
  table["rows"] = json::array({row});
  return table;
}

}  // namespace

TEST_CASE("work: wide axes are refused by their configuration count before allocating", "[work]") {
  // Issue 12: each axis was capped but their product was not (std::bad_alloc).
  check_refused(run({"model", "--seq-lens", "1:4194304:+64", "--batch", "1:65536"}, tight()),
                {"configurations", "the cap is 100000"});
  check_refused(run({"sweep", "--seq-lens", "1:60000", "--heads", "1:60000", "--dtype",
                     "fp16,bf16,fp32", "--both"},
                    tight()),
                // 60000 · 60000 · 3 dtypes · 2 masks · the forward kernels
                {fmt::format("{} configurations", 21600000000 * cfr::test::builtin_kernel_count(
                                                                    cfr::Direction::forward)),
                 "the cap is 100000"});
  // One axis alone: counted, not enumerated.
  check_refused(run({"model", "--seq-lens", "1:1000000000000"}, tight()),
                {"--seq-lens", "more than 100000 values"});
  check_refused(run({"model", "--seq-lens", "[pow2]0:20,1:99999"}, tight()),
                {"--seq-lens", "more than 100000 values"});
  // Repeats would double the work and the rows; say so instead.
  check_refused(run({"model", "--seq-lens", "1024,1024:4096:x2"}, tight()),
                {"--seq-lens: 1024 appears twice"});
  check_refused(run({"model", "--kernels", "naive,naive"}, tight()),
                {"--kernels: naive appears twice"});
  check_refused(run({"model", "--dtype", "fp16, fp16"}, tight()), {"--dtype: fp16 appears twice"});
}

TEST_CASE("work: the largest allowed problem is modelled in bounded time", "[work]") {
  // The causal block counts are closed-form sums: N = 2^22 with 32-row tiles
  // was a loop of 2^17 blocks per row and per call.
  const CliResult r = run({"model", "--seq-lens", "4194304", "--head-dims", "32,64,128", "--both",
                           "--backward", "--dtype", "fp16,bf16,fp32", "--json", "-"},
                          tight(20));
  REQUIRE(r.exit_code == 0);
  // 3 head dims · 2 masks · 3 dtypes · every kernel, forward and backward, that takes N = 2^22
  // query tokens (fa2_decode is built for 16 at most).
  const cfr::AttentionProblem problem{1, 8, 4194304, 64, false, cfr::DType::fp16};
  CHECK(json::parse(r.out)["results"].size() ==
        18 * cfr::test::kernels_planned(problem, true).size());
}

TEST_CASE("work: a historical row with a huge N imports and audits in bounded time", "[work]") {
  // Issue 12: import-historical looped for minutes on the causal block count.
  Scratch scratch;
  const std::string table = scratch.write_json("t.json", historical_table_with(2147483647));
  const std::string out = scratch.path("a100.json");
  const CliResult imported =
      run({"import-historical", table, "--gpu", "A100", "--out", out}, tight(10));
  REQUIRE(imported.exit_code == 0);
  const CliResult audited = run({"audit", out}, tight(10));
  CHECK_FALSE(audited.timed_out);
  CHECK(audited.exit_code == 1);  // the claims disagree with the model, as for every seed row
  // Past the models' limits: refused by name, at once.
  const std::string huge =
      scratch.write_json("huge.json", historical_table_with(std::int64_t{1} << 40));
  check_refused(
      run({"import-historical", huge, "--gpu", "A100", "--out", scratch.path("x.json")}, tight(5)),
      {"rows[0]", "seq_len = 1099511627776 is outside 1..2147483647"});
}

TEST_CASE("work: an audit of a report edited to the largest shapes ends quickly", "[work]") {
  Scratch scratch;
  json report = model_report_json();
  report["results"][0]["seq_len"] = 2147483647;
  report["results"][1]["batch"] = 2147483647;
  report["results"][1]["heads"] = 2147483647;
  const CliResult r = run({"audit", scratch.write_json("r.json", report)}, tight(10));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);  // the edited figures no longer follow from the inputs
}

TEST_CASE("work: inputs that never end, or nest without end, are refused", "[work]") {
  Scratch scratch;
  check_refused(run({"audit", "/dev/zero"}, tight()), {"/dev/zero", "not a regular file"});
  check_refused(run({"table", "/dev/urandom"}, tight()), {"not a regular file"});
  check_refused(run({"audit", scratch.write("deep.json", std::string(200000, '[') + "1" +
                                                             std::string(200000, ']'))},
                    tight()),
                {"deep.json", "nested deeper than 64 levels"});
  // A FIFO nobody writes to reads as empty instead of blocking.
  const std::string fifo = scratch.path("in.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_refused(run({"audit", fifo}, tight(5)), {fifo, "empty file"});
  // A stream longer than any report: stopped at the input cap. The writer is
  // connected before the binary starts: one that opened after the binary's
  // first read would find a FIFO without a writer (read as empty) and wait
  // for a reader for ever. The test's own read end lets the writer's open
  // return at once, and closing it ends the writer once the binary is gone.
  const std::string endless = scratch.path("endless.fifo");
  REQUIRE(::mkfifo(endless.c_str(), 0600) == 0);
  const int held_read_end = ::open(endless.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(held_read_end >= 0);
  const int write_end = ::open(endless.c_str(), O_WRONLY);
  REQUIRE(write_end >= 0);
  ::signal(SIGPIPE, SIG_IGN);
  std::thread writer([write_end] {
    const std::string chunk(1 << 20, ' ');
    while (::write(write_end, chunk.data(), chunk.size()) > 0) {
    }
  });
  CliLimits limits = tight(60);
  limits.address_space_bytes = std::size_t{2} << 30;
  check_refused(run({"audit", endless}, limits), {endless, "larger than 512 MiB"});
  ::close(held_read_end);  // no reader left: the blocked write fails with EPIPE
  writer.join();
  ::close(write_end);
}

TEST_CASE("work: a plugin that is a device or a FIFO is refused before it is read", "[work]") {
  // --plugin /dev/zero was read without end (8 GB, then std::bad_alloc); a FIFO with no writer
  // never opened.
  Scratch scratch;
  check_refused(run({"model", "--plugin", "/dev/zero"}, tight()),
                {"plugin /dev/zero", "not a regular file"});
  const std::string fifo = scratch.path("p.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  check_refused(run({"sweep", "--plugin", fifo}, tight(5)), {fifo, "not a regular file"});
  check_refused(run({"model", "--plugin", scratch.dir}, tight()), {"is a folder"});
}

TEST_CASE("work: a historical table of more rows than a document has is refused", "[work]") {
  Scratch scratch;
  json table = committed("configs/historical/v0.4.0.json");
  const json row = table["rows"][0];
  table["rows"] = json::array();
  for (int i = 0; i < 10001; ++i) table["rows"].push_back(row);
  const std::string path = scratch.write_json("big.json", table);
  check_refused(run({"import-historical", path, "--out-dir", scratch.path("out")}, tight()),
                {"big.json", "rows: 10001 rows, more than the 10000"});
  CHECK_FALSE(file_exists(scratch.path("out")));
}
