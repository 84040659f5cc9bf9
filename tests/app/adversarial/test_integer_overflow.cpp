// Class 3 of issue 12: integer overflow and truncation. Every product of
// user numbers is formed with checked arithmetic, every integer that must
// fit an int is refused when it does not, and a range stops before its next
// value would leave 64 bits.
#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "adversarial.hpp"

using nlohmann::json;

namespace {

std::string audit_refusal(const Scratch& scratch, const json& report) {
  const CliResult r = run({"audit", scratch.write_json("r.json", report)});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  return r.err;
}

}  // namespace

TEST_CASE("overflow: a range's next value past int64 ends the range, it does not wrap",
          "[overflow]") {
  // Issue 12: 1:9223372036854775807:x2 was undefined behaviour.
  check_refused(run({"model", "--seq-lens", "1:9223372036854775807:x2"}),
                {"--seq-lens: 8388608 is larger than 4194304"});
  check_refused(run({"model", "--batch", "9223372036854775806:9223372036854775807:+5"}),
                {"--batch: 9223372036854775806 is larger than 65536"});
  check_refused(run({"model", "--heads", "9223372036854775808"}),
                {"--heads: '9223372036854775808' is out of the 64-bit range"});
  check_refused(run({"model", "--seq-lens", "[pow2]63"}), {"2^63", "out of the 64-bit range"});
  check_refused(run({"model", "--seq-lens", "-9223372036854775808"}), {"must be positive"});
  // An arithmetic step as large as int64: one value, then the end.
  const CliResult one = run({"model", "--seq-lens", "1024:9223372036854775807:+9223372036854775807",
                             "--kernels", "naive", "--json", "-"});
  REQUIRE(one.exit_code == 0);
  CHECK(json::parse(one.out)["results"].size() == 1);
}

TEST_CASE("overflow: products of axes that leave 64 bits are refused by name", "[overflow]") {
  // Issue 12: batch × heads wrapping to 0 gave ok rows with zero figures.
  check_refused(run({"model", "--batch", "65536", "--heads", "65536", "--seq-lens", "4194304"}),
                {"--batch 65536 × --heads 65536 × --seq-lens 4194304", "overflows 64 bits"});
  check_refused(run({"sweep", "--batch", "65536", "--heads", "65536", "--seq-lens", "2097152"}),
                {"overflows 64 bits"});
  // Just inside, and inside CUDA's grid (fa1_wmma puts heads on y, batch on z: at most 65535
  // each): modelled, every figure positive.
  const CliResult r = run({"model", "--batch", "65535", "--heads", "65535", "--seq-lens", "1024",
                           "--kernels", "fa1_wmma", "--json", "-"});
  REQUIRE(r.exit_code == 0);
  const json row = json::parse(r.out)["results"][0];
  CHECK(row["status"] == "ok");
  CHECK(row["flops"]["dense"].get<double>() > 0);
  CHECK(row["traffic"]["bytes"].get<double>() > 0);
  // One more head is a grid fa1_wmma cannot launch: skipped by name, not modelled as if it could.
  const CliResult wide = run({"model", "--batch", "1", "--heads", "65536", "--seq-lens", "1024",
                              "--kernels", "fa1_wmma", "--json", "-"});
  REQUIRE(wide.exit_code == 0);
  const json skipped = json::parse(wide.out)["results"][0];
  CHECK(skipped["status"] == "skipped");
  CHECK(skipped["reason"] ==
        "fa1_wmma's forward launch puts heads on blockIdx.y: 65536 blocks, above CUDA's 65535");
}

TEST_CASE("overflow: a historical table's shape is checked before the model multiplies it",
          "[overflow]") {
  Scratch scratch;
  json table = committed("configs/historical/v0.4.0.json");
  table["configuration"]["batch"] = std::int64_t{1} << 32;
  table["configuration"]["heads"] = std::int64_t{1} << 32;  // product 2^64 wraps to 0
  const std::string path = scratch.write_json("t.json", table);
  check_refused(run({"import-historical", path, "--gpu", "h100", "--out", scratch.path("o.json")}),
                {"batch = 4294967296 is outside 1..2147483647"});
  table["configuration"]["batch"] = 2147483647;
  table["configuration"]["heads"] = 2147483647;
  const std::string wide = scratch.write_json("w.json", table);
  check_refused(run({"import-historical", wide, "--gpu", "h100", "--out", scratch.path("o.json")}),
                {"overflows 64 bits"});
  CHECK(scratch.entries() == std::vector<std::string>({"t.json", "w.json"}));
}

TEST_CASE("overflow: report integers that must fit an int are refused, never truncated",
          "[overflow]") {
  // Issue 12: a device index of 2^32 was truncated to 0 and audited clean.
  Scratch scratch;
  json report = model_report_json();
  report["results"][0]["device"] = std::int64_t{1} << 32;
  CHECK(audit_refusal(scratch, report).find("results[0].device: 4294967296 is out of range") !=
        std::string::npos);
  const std::pair<const char*, json> cases[] = {
      {"results[0].tile.br", std::int64_t{1} << 32},
      {"results[1].tile.bc", -(std::int64_t{1} << 32)},
  };
  for (const auto& [where, value] : cases) {
    INFO(where);
    json edited = model_report_json();
    const std::string text(where);
    const std::size_t row = text[8] - '0';
    edited["results"][row]["tile"][text.substr(text.size() - 2)] = value;
    CHECK(audit_refusal(scratch, edited).find(std::string(where) + ": ") != std::string::npos);
  }
  json unsigned_device = model_report_json();
  unsigned_device["results"][0]["batch"] = std::numeric_limits<std::uint64_t>::max();
  CHECK(audit_refusal(scratch, unsigned_device)
            .find("results[0].batch: 18446744073709551615 is out "
                  "of range") != std::string::npos);
}

TEST_CASE("overflow: integer options out of their type's range are refused", "[overflow]") {
  check_refused(run({"ceilings", "--device", "4294967296"}), {"--device"});
  check_refused(run({"sweep", "--warmup", "4294967296"}), {"--warmup"});
  check_refused(run({"sweep", "--min-samples", "2147483648"}), {"--min-samples"});
  check_refused(run({"sweep", "--seed", "-1"}), {"--seed"});
  check_refused(run({"sweep", "--seed", "18446744073709551616"}), {"--seed"});
  check_refused(run({"model", "--batch", "0"}), {"--batch: 0 must be positive"});
  check_refused(run({"model", "--heads", "-1"}), {"--heads: -1 must be positive"});
}
