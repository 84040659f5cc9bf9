// Class 4 of issue 12: values that must be refused. NaN, infinities,
// negatives and empty strings for every numeric, list and path option of
// every command; repeated JSON keys anywhere in any file the tool reads;
// figures no measurement can have; and the two compare cases that would let
// a CI gate pass on nothing.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "../../evidence/sample_reports.hpp"
#include "adversarial.hpp"
#include "roofline/report/report_json.hpp"
#include "tests/shipped_gpus.hpp"

using nlohmann::json;

namespace {

struct Option {
  std::vector<std::string> command;  // what comes before the option
  std::string name;
};

// Every numeric option, with the command it belongs to.
const std::vector<Option> numeric_options{
    {{"sweep"}, "--max-noise"},
    {{"sweep"}, "--max-seconds"},
    {{"sweep"}, "--warmup"},
    {{"sweep"}, "--min-samples"},
    {{"sweep"}, "--seed"},
    {{"ceilings"}, "--device"},
    {{"compare", "a.json", "b.json"}, "--threshold"},
    {{"compare", "a.json", "b.json"}, "--significance"},
};

// Every option that takes a list or a path, and every positional file.
const std::vector<Option> text_options{
    {{"model"}, "--seq-lens"},
    {{"model"}, "--head-dims"},
    {{"model"}, "--batch"},
    {{"model"}, "--heads"},
    {{"model"}, "--dtype"},
    {{"model"}, "--kernels"},
    {{"model"}, "--gpu"},
    {{"model"}, "--gpu-table"},
    {{"model"}, "--flop-convention"},
    {{"model"}, "--json"},
    {{"model"}, "--csv"},
    {{"model"}, "--md"},
    {{"sweep"}, "--devices"},
    {{"sweep"}, "--ceiling"},
    {{"sweep"}, "--kernels"},
    {{"sweep"}, "--json"},
    {{"gpus"}, "--gpu-table"},
    {{"gpus"}, "--json"},
    {{"ceilings"}, "--gpu"},
    {{"ceilings"}, "--gpu-table"},
    {{"ceilings"}, "--json"},
    {{"table", "r.json"}, "--columns"},
    {{"table", "r.json"}, "--format"},
    {{"table", "r.json"}, "--status"},
    {{"audit", "r.json"}, "--json"},
    {{"compare", "a.json", "b.json"}, "--json"},
    {{"compare", "a.json", "b.json"}, "--match-kernel"},
    {{"plot", "r.json", "--out", "x.svg"}, "--ceilings"},
    {{"plot", "r.json", "--out", "x.svg"}, "--png"},
    {{"plot", "r.json"}, "--out"},
    {{"report", "r.json"}, "--html"},
    {{"import-historical", "t.json"}, "--out"},
    {{"import-historical", "t.json"}, "--out-dir"},
    {{"import-historical", "t.json", "--out", "x.json"}, "--gpu"},
    {{"import-historical", "t.json", "--out", "x.json"}, "--gpu-table"},
};

std::vector<std::string> with(const Option& option, const std::string& value) {
  std::vector<std::string> arguments = option.command;
  arguments.push_back(option.name);
  arguments.push_back(value);
  return arguments;
}

}  // namespace

TEST_CASE("values: NaN, infinities, overflow and junk are refused by every numeric option",
          "[values]") {
  // Issue 12: NaN passed CLI11's range checks (--threshold nan, --max-seconds nan).
  Scratch scratch;
  CliLimits here;
  here.working_directory = scratch.dir;
  for (const Option& option : numeric_options) {
    for (const char* value :
         {"nan", "NaN", "inf", "-inf", "1e999", "-1", "", "abc", "1,5", "0x10", "1 "}) {
      INFO(option.name << " " << value);
      check_refused(run(with(option, value), here), {option.name});
    }
  }
  CHECK(scratch.entries().empty());
}

TEST_CASE("values: an empty list or path is refused, never read as 'all' or 'none'", "[values]") {
  // Issue 12: --kernels '' meant "all"; --gpu-table '' meant the built-in table.
  Scratch scratch;
  CliLimits here;
  here.working_directory = scratch.dir;
  for (const Option& option : text_options) {
    INFO(option.name);
    check_refused(run(with(option, ""), here), {option.name});
  }
  for (const char* list : {",", " ", " , ", "naive,", ",naive"}) {
    INFO(list);
    check_refused(run({"model", "--kernels", list}, here), {"--kernels"});
    check_refused(run({"model", "--dtype", list}, here), {"--dtype"});
  }
  for (const char* positional : {"audit", "table"}) {
    check_refused(run({positional, ""}, here), {});
  }
  CHECK(scratch.entries().empty());
}

TEST_CASE("values: a repeated key anywhere in any file the tool reads is refused", "[values]") {
  // Issue 12: duplicate keys were accepted, the last winning, so a second
  // "auditable": true could override the first.
  Scratch scratch;
  const std::string report = model_report_json().dump();
  const auto twice = [](std::string text, const std::string& key, const std::string& extra) {
    const auto at = text.find("\"" + key + "\":");
    REQUIRE(at != std::string::npos);
    return text.insert(at, "\"" + key + "\":" + extra + ",");
  };
  const std::string top = scratch.write("top.json", twice(report, "schema", "\"x\""));
  check_refused(run({"audit", top}), {"top.json", "key 'schema' appears twice"});
  const std::string flag = scratch.write("flag.json", twice(report, "auditable", "true"));
  check_refused(run({"audit", flag}), {"provenance", "key 'auditable' appears twice"});
  const std::string row = scratch.write("row.json", twice(report, "seq_len", "1"));
  check_refused(run({"table", row}), {"results[0]", "key 'seq_len' appears twice"});
  const std::string deep = scratch.write("deep.json", twice(report, "Q", "0"));
  check_refused(run({"compare", deep, deep}),
                {"results[0].traffic.breakdown", "'Q' appears twice"});

  const std::string gpus = read_file(source_path("configs/gpus.json"));
  const std::string table = scratch.write("gpus.json", twice(gpus, "memory_bandwidth_GBps", "{}"));
  check_refused(run({"model", "--gpu-table", table}), {"gpus.json", "gpus[0]", "appears twice"});
  check_refused(run({"gpus", "--gpu-table", table}), {"appears twice"});

  const std::string historical = read_file(source_path("configs/historical/v0.4.0.json"));
  const std::string h = scratch.write("h.json", twice(historical, "batch", "2"));
  check_refused(run({"import-historical", h, "--out-dir", scratch.path("out")}),
                {"configuration", "key 'batch' appears twice"});

  const std::string ceilings = read_file(source_path("results/h200/ceilings.json"));
  const std::string c = scratch.write("c.json", twice(ceilings, "value", "1"));
  const std::string r = scratch.write("r.json", report);
  check_refused(run({"plot", r, "--ceilings", c, "--out", scratch.path("x.svg")}),
                {"c.json", "figures[0]", "'value' appears twice"});
  CHECK_FALSE(file_exists(scratch.path("x.svg")));
}

TEST_CASE("values: bytes after a report are refused, a NUL byte first or not", "[values]") {
  // Issue 21: a report followed by a NUL and more bytes was read as the part
  // before the NUL: `table` printed it and `audit` called it consistent.
  Scratch scratch;
  const std::string report = model_report_json().dump();
  const std::string byte = std::to_string(report.size() + 1);
  const std::string nul = scratch.write("nul.json", report + std::string("\0{}", 3));
  const std::string tail = scratch.write("tail.json", report + "{}");
  for (const char* command : {"table", "audit"}) {
    INFO(command);
    check_refused(run({command, nul}), {"nul.json", "not valid JSON (byte " + byte, "NUL"});
    check_refused(run({command, tail}), {"tail.json", "not valid JSON (byte " + byte});
  }
}

TEST_CASE("values: samples and figures no measurement can have are refused", "[values]") {
  // Issue 12: negative samples audited clean.
  Scratch scratch;
  json measured = cfr::to_json(measured_report());
  for (const double sample : {-1.0, 0.0, -0.0}) {
    INFO(sample);
    json edited = measured;
    edited["results"][2]["timing"]["samples_ms"][1] = sample;
    check_refused(run({"audit", scratch.write_json("s.json", edited)}),
                  {"results[2].timing.samples_ms[1]: must be positive"});
  }
  json negative_median = measured;
  negative_median["results"][0]["timing"]["median_ms"] = -3;
  check_refused(run({"audit", scratch.write_json("m.json", negative_median)}),
                {"results[0].timing.median_ms: must not be negative"});
  json zero_batch = model_report_json();
  zero_batch["results"][0]["batch"] = 0;
  check_refused(run({"audit", scratch.write_json("b.json", zero_batch)}),
                {"results[0].batch: must be at least 1"});
  json no_bandwidth = model_report_json();
  no_bandwidth["ceiling"]["bandwidth_GBps"] = 0;
  check_refused(run({"table", scratch.write_json("bw.json", no_bandwidth)}),
                {"ceiling.bandwidth_GBps: must be positive"});
  json huge_peak = model_report_json();
  huge_peak["ceiling"]["peak_TFLOPs"]["fp16_tensor"] = 1e300;
  check_refused(run({"compare", "--roofline", scratch.write_json("p.json", huge_peak)}),
                {"ceiling.peak_TFLOPs.fp16_tensor", "ridge of inf"});

  json ceilings = committed("results/h200/ceilings.json");
  ceilings["figures"][0]["samples"][0] = -5;
  const std::string report = scratch.write_json("r.json", model_report_json());
  check_refused(run({"plot", report, "--ceilings", scratch.write_json("c.json", ceilings), "--out",
                     scratch.path("x.svg")}),
                {"figures[0].samples[0]: must be a positive number"});
}

TEST_CASE("values: a GPU table whose ridge is infinite or zero is refused", "[values]") {
  // Issue 12: a peak that overflows the ridge was accepted, then failed its own audit.
  Scratch scratch;
  const json table = committed("configs/gpus.json");
  const auto edited = [&](const std::string& field, double value) {
    json t = table;
    if (field == "bandwidth") {
      cfr::test::gpu_row(t, "a100")["memory_bandwidth_GBps"]["value"] = value;
    } else {
      cfr::test::gpu_row(t, "a100")["peak_TFLOPs"][field]["value"] = value;
    }
    return scratch.write_json("t.json", t);
  };
  check_refused(run({"gpus", "--gpu-table", edited("fp16_tensor", 1e300)}),
                {"gpu 'a100'", "peak_TFLOPs.fp16_tensor.value", "ridge of inf"});
  // Each figure finite and positive, their ratio not: 312e12 FLOP/s over
  // 1e-296 byte/s, and 19.5e12 FLOP/s over an infinite 1e309 byte/s.
  check_refused(run({"model", "--gpu-table", edited("bandwidth", 1e-305)}),
                {"gpu 'a100'", "ridge of inf"});
  check_refused(run({"model", "--gpu-table", edited("bandwidth", 1e300)}),
                {"gpu 'a100'", "peak_TFLOPs.fp32_simt.value", "ridge of 0"});
  check_refused(run({"model", "--gpu-table", edited("fp16_tensor", 4.9406564584124654e-324)}),
                {"gpu 'a100'", "peak_TFLOPs.fp16_tensor.value", "ridge of 0"});
  json named = table;
  named["gpus"][0]["id"] = "../escape";
  check_refused(run({"gpus", "--gpu-table", scratch.write_json("n.json", named)}),
                {"field 'id' must be letters"});
  named["gpus"][0]["id"] = "auto";
  check_refused(run({"gpus", "--gpu-table", scratch.write_json("n.json", named)}),
                {"field 'id'", "not 'auto'"});
}

TEST_CASE("values: a historical table whose name would leave --out-dir is refused", "[values]") {
  Scratch scratch;
  json table = committed("configs/historical/v0.4.0.json");
  table["name"] = "../../escape";
  check_refused(run({"import-historical", scratch.write_json("t.json", table), "--out-dir",
                     scratch.path("out")}),
                {"name: '../../escape' must be letters"});
  CHECK(scratch.entries() == std::vector<std::string>{"t.json"});
}

TEST_CASE("values: compare refuses a baseline whose auditable flag its contents do not back",
          "[values]") {
  // Issue 12: a baseline that claims auditable: true with no samples was accepted.
  Scratch scratch;
  cfr::Report base = measured_report();
  for (cfr::ResultRow& row : base.results) {
    if (row.timing) row.timing->samples_ms.clear();
  }
  REQUIRE(base.provenance.auditable);
  const std::string base_path = scratch.write_json("base.json", cfr::to_json(base));
  const std::string new_path = scratch.write_json("new.json", cfr::to_json(measured_report()));
  check_refused(run({"compare", base_path, new_path}),
                {"base.json: refused as a baseline", "claims auditable: true", "no raw samples"});
  // --allow-unauditable compares anyway, labelled.
  CHECK(run({"compare", base_path, new_path, "--allow-unauditable"}).exit_code == 0);
}

TEST_CASE("values: --fail-on-regression fails a gate that compared no row", "[values]") {
  // Issue 12: the gate passed when no row matched at all.
  Scratch scratch;
  const std::string a = scratch.write_json("a.json", model_report_json());
  const std::string b = scratch.write_json("b.json", model_report_json());
  const CliResult model_rows =
      run({"compare", a, b, "--allow-unauditable", "--fail-on-regression"});
  CHECK(model_rows.exit_code == 1);
  CHECK(model_rows.out.find("NOTHING COMPARED") != std::string::npos);

  cfr::Report renamed = measured_report();
  for (cfr::ResultRow& row : renamed.results) row.kernel += "_v2";
  const std::string base = scratch.write_json("base.json", cfr::to_json(measured_report()));
  const std::string next = scratch.write_json("next.json", cfr::to_json(renamed));
  const CliResult disjoint = run({"compare", base, next, "--fail-on-regression"});
  CHECK(disjoint.exit_code == 1);
  CHECK(disjoint.out.find("NOTHING COMPARED") != std::string::npos);
  // Without the flag the same comparison is reported, not failed.
  CHECK(run({"compare", base, next}).exit_code == 0);
  // And a gate that compared rows and found them the same passes.
  CHECK(run({"compare", base, base, "--fail-on-regression"}).exit_code == 0);
}

TEST_CASE("values: measuring options are checked without a device too", "[values]") {
  // Without a GPU, `sweep --devices abc` and `--ceiling garbage` exited 0 with "ignored".
  Scratch scratch;
  CliLimits here;
  here.working_directory = scratch.dir;
  check_refused(run({"sweep", "--devices", "abc"}, here), {"--devices \"abc\""});
  check_refused(run({"sweep", "--devices", "-1"}, here), {"\"-1\"", "0 or more"});
  check_refused(run({"sweep", "--devices", "0,0"}, here), {"listed twice"});
  check_refused(run({"sweep", "--ceiling", "garbage"}, here), {"--ceiling garbage"});
  check_refused(run({"sweep", "--ceiling", source_path("results/h200/sweep-causal.json")}, here),
                {"--ceiling", "expected 'cuflash-roofline/ceilings/v1'"});
  // A well-formed one is still only ignored, and said so.
  const CliResult fine = run({"sweep", "--seq-lens", "1024", "--devices", "5", "--ceiling",
                              source_path("results/h200/ceilings.json")},
                             here);
  CHECK(fine.exit_code == 0);
  CHECK(fine.err.find("ignored, nothing is measured: --devices 5") != std::string::npos);
  // `ceilings` names a bad --gpu or table (2) before it looks for a device (3).
  check_refused(run({"ceilings", "--gpu", "bogus"}, here), {"--gpu bogus"});
  check_refused(run({"ceilings", "--gpu-table", "/nonexistent"}, here), {"/nonexistent"});
  CHECK(scratch.entries().empty());
}

TEST_CASE("values: an option a mode ignores is refused, not dropped", "[values]") {
  // `model --list --json x.json` exited 0 having written nothing; `compare --roofline
  // --fail-on-regression` gated on nothing.
  Scratch scratch;
  CliLimits here;
  here.working_directory = scratch.dir;
  check_refused(run({"model", "--list", "--json", scratch.path("x.json")}, here),
                {"--json", "--list"});
  check_refused(run({"sweep", "--list", "--seq-lens", "bogus"}, here), {"--seq-lens", "--list"});
  CHECK(run({"model", "--list"}, here).exit_code == 0);
  const std::string r = source_path("results/h200/sweep-causal.json");
  for (const char* option :
       {"--fail-on-regression", "--fail-on-ambiguous", "--allow-cross-device"}) {
    check_refused(run({"compare", "--roofline", option, r}, here), {option, "--roofline"});
  }
  check_refused(run({"compare", "--roofline", "--by", "shape", r}, here), {"--by", "--roofline"});
  CHECK(scratch.entries().empty());
}

TEST_CASE("values: a list with an empty, repeated or contradictory item is refused", "[values]") {
  const std::string r = source_path("results/h200/sweep-causal.json");
  for (const char* figures : {",", ",achieved/TFLOPs", "model/ai,"}) {
    INFO(figures);
    check_refused(run({"compare", "--figures", figures, r, r}), {"--figures", "empty item"});
  }
  check_refused(run({"compare", "--figures", "model/ai,model/ai", r, r}), {"appears twice"});
  check_refused(run({"table", r, "--columns", "kernel,kernel"}), {"'kernel' appears twice"});
  check_refused(
      run({"compare", r, r, "--match-kernel", "naive=fa1_wmma", "--match-kernel", "naive=fa2_mma"}),
      {"--match-kernel naive=fa2_mma", "already matched to fa1_wmma"});
  check_refused(run({"compare", r, r, "--match-kernel", "a=b=c"}), {"--match-kernel a=b=c"});
}

TEST_CASE("values: a report with a row twice, or a kernel name no table can show, is refused",
          "[values]") {
  // A second row of one configuration paired with nothing, so a 2x slower copy passed the gate
  // as "only in new"; a name with a newline split table rows.
  Scratch scratch;
  json measured = cfr::to_json(measured_report());
  json twice = measured;
  twice["results"].push_back(twice["results"][2]);
  const std::string dup = scratch.write_json("dup.json", twice);
  check_refused(run({"audit", dup}), {"dup.json", "results[9]: repeats results[2]"});
  check_refused(
      run({"compare", scratch.write_json("one.json", measured), dup, "--fail-on-regression"}),
      {"repeats results[2]"});
  for (const char* name : {"a\nb", "esc\x1b[31m", "", "tab\there"}) {
    json named = measured;
    named["results"][0]["kernel"] = name;
    const CliResult r = run({"table", scratch.write_json("n.json", named)});
    check_refused(r, {"results[0].kernel"});
    CHECK(r.err.find('\x1b') == std::string::npos);
  }
  // A GPU table or device record whose SM count no GPU has (the L2 model keeps state per SM).
  json table = committed("configs/gpus.json");
  table["gpus"][0]["sm_count"]["value"] = 2147483648.0;
  check_refused(run({"model", "--gpu-table", scratch.write_json("g.json", table)}),
                {"g.json", "sm_count.value", "up to 65536"});
  json device = measured;
  device["devices"][0]["sm_count"] = 100000;
  check_refused(run({"audit", scratch.write_json("d.json", device)}),
                {"devices[0].sm_count: must be at most 65536"});
}
