// Class 5 of issue 12: messages. A refusal names what the user typed (the
// command word, the file, the key path) and the problem in their terms, never
// a library's wording ("A subcommand is required", "[json.exception...]",
// "empty file" for a folder).
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "adversarial.hpp"

using nlohmann::json;

namespace {

const std::string commands =
    "commands: gpus, model, sweep, ceilings, table, audit, compare, plot, report, "
    "import-historical, import-samples";

// A document with `number_text` spliced in as the value of the first `key`,
// as raw JSON text: 1e999 cannot be written by a JSON library.
std::string with_number(const json& document, const std::string& key,
                        const std::string& number_text) {
  std::string text = document.dump();
  const std::string marker = "\"" + key + "\":";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  const auto value = at + marker.size();
  const auto end = text.find_first_of(",}", value);
  return text.replace(value, end - value, number_text);
}

}  // namespace

TEST_CASE("messages: a misspelt or missing command is named, with the commands", "[messages]") {
  // Issue 12: an unknown subcommand said "A subcommand is required".
  for (const char* word : {"frobnicate", "sweeps", "Model", "", "audit.json"}) {
    INFO(word);
    check_refused(run({word}), {"unknown command '" + std::string(word) + "'", commands});
    check_refused(run({word, "--json", "x.json"}), {"unknown command", commands});
  }
  check_refused(run({}), {"a command is required", commands});
  check_refused(run({"--", "frobnicate"}), {"unknown command 'frobnicate'"});
  // A known command's own usage errors are unchanged.
  check_refused(run({"model", "--bogus"}), {"--bogus"});
}

TEST_CASE("messages: a number outside a double's range names the file and the key", "[messages]") {
  // Issue 12: it surfaced as "[json.exception.out_of_range.406] ...".
  Scratch scratch;
  for (const char* number : {"1e999", "-1e999", "1E400"}) {
    INFO(number);
    const std::string report =
        scratch.write("r.json", with_number(model_report_json(), "seq_len", number));
    for (const char* command : {"audit", "table"}) {
      const CliResult r = run({command, report});
      check_refused(r, {"r.json", "results[0].seq_len", std::string(number)});
      CHECK(r.err.find("json.exception") == std::string::npos);
    }
    const std::string gpus =
        scratch.write("g.json", with_number(committed("configs/gpus.json"), "value", number));
    check_refused(run({"gpus", "--gpu-table", gpus}), {"g.json", number});
    check_refused(run({"model", "--gpu-table", gpus}), {"g.json", number});
    const std::string ceilings = scratch.write(
        "c.json", with_number(committed("results/h200/ceilings.json"), "value", number));
    const std::string good = scratch.write_json("good.json", model_report_json());
    check_refused(run({"plot", good, "--ceilings", ceilings, "--out", scratch.path("x.svg")}),
                  {"c.json", "figures[0].value", number});
    const std::string historical = scratch.write(
        "h.json", with_number(committed("configs/historical/v0.4.0.json"), "batch", number));
    check_refused(run({"import-historical", historical, "--out-dir", scratch.path("out")}),
                  {"h.json", "batch", number});
  }
  CHECK_FALSE(file_exists(scratch.path("x.svg")));
}

TEST_CASE("messages: a folder where a file is wanted is called a folder", "[messages]") {
  // Issue 12: a folder given as a report said "empty file".
  Scratch scratch;
  const std::string report = scratch.write_json("r.json", model_report_json());
  const std::string folder = scratch.path("");
  const std::vector<std::vector<std::string>> reads{
      {"audit", folder},
      {"table", folder},
      {"plot", folder, "--out", scratch.path("x.svg")},
      {"plot", report, "--ceilings", folder, "--out", scratch.path("x.svg")},
      {"import-historical", folder, "--out-dir", scratch.path("out")},
      {"gpus", "--gpu-table", folder},
      {"model", "--gpu-table", folder},
  };
  for (const std::vector<std::string>& arguments : reads) {
    INFO(arguments[0] << " " << arguments[1]);
    const CliResult r = run(arguments);
    check_refused(r, {"is a folder, not a file"});
    CHECK(r.err.find("empty") == std::string::npos);
  }
}

TEST_CASE("messages: a list option before the files takes one value, not the files", "[messages]") {
  // `compare --match-kernel a=b BASE NEW` said "1 paths given": CLI11 let the
  // option take BASE as a second value (and `audit --plugin P a.json b.json`
  // tried to load a.json as a plugin).
  Scratch scratch;
  const std::string report = scratch.write_json("r.json", model_report_json());
  const std::string other = scratch.write_json("s.json", model_report_json());
  const std::vector<std::vector<std::string>> before_files{
      {"compare", "--allow-unauditable", "--match-kernel", "fa1_wmma=fa1_wmma", report, other},
      {"compare", "--allow-unauditable", "--figures", "model/ai", report, other},
  };
  for (const std::vector<std::string>& arguments : before_files) {
    INFO(arguments[2] << " " << arguments[3]);
    const CliResult r = run(arguments);
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  // The roofline view takes no option of the comparison: refused by name, not ignored.
  check_refused(run({"compare", "--roofline", "--figures", "model/ai", report, other}),
                {"--figures", "--roofline"});
  // --plugin takes the one file, and the two after it stay reports: the plugin is refused
  // for what it is, not a report for being no plugin.
  check_refused(run({"audit", "--plugin", report, other, other}),
                {"plugin " + report + ": not a shared library"});
  // Two values after one use: the second is one more path.
  check_refused(run({"compare", report, other, "--match-kernel", "a=b", "c=d"}), {"3 paths given"});
}

TEST_CASE("messages: a reason a file carries cannot split a table row or reach the terminal raw",
          "[messages]") {
  // A row's reason is free text: a newline split `table` rows, a pipe broke the Markdown table,
  // an ESC reached the terminal.
  Scratch scratch;
  json report = model_report_json();
  report["results"][0]["status"] = "skipped";
  report["results"][0]["reason"] = "line one\nline two | \x1b[31mred";
  const std::string path = scratch.write_json("r.json", report);
  const std::size_t rows = report["results"].size();
  for (const char* format : {"text", "md"}) {
    INFO(format);
    const CliResult r = run({"table", path, "--format", format, "--no-legend"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find("line one\\x0aline two") != std::string::npos);
    CHECK(static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n')) == rows + 2);
  }
  const CliResult md = run({"table", path, "--format", "md", "--no-legend"});
  CHECK(md.out.find("line two \\| \\x1b[31mred") != std::string::npos);
  // An argument with ESC in a message is shown escaped too.
  const CliResult bad = run({"model", "--dtype", "fp\x1b[31m16"});
  check_refused(bad, {"fp\\x1b[31m16"});
}
