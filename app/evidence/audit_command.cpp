// `cuflash-roofline audit REPORT…`: recomputes every derived figure of each
// report from its own inputs and samples, and checks that `auditable: true`
// is earned. A `ceilings` report (told apart by its schema) is audited for
// what it holds: each figure's median of its samples, its fraction of the
// datasheet, its provenance. Exit 0: every report consistent; 1: findings;
// 2: unusable file.
#include <iostream>
#include <memory>
#include <variant>

#include <nlohmann/json.hpp>

#include "cli_checks.hpp"
#include "commands.hpp"
#include "evidence/evidence_cli.hpp"
#include "plugin_options.hpp"
#include "report_file.hpp"
#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/ceilings_audit.hpp"

namespace cfr::app {

namespace {

struct AuditOptions {
  std::vector<std::string> files;
  std::string json_path;
  std::vector<std::string> plugins;  // to count `plugin` rows' bytes again
};

// Every file read and checked before the first is audited, so that a bad
// one fails alone.
std::vector<std::variant<Report, CeilingsReport>> read_documents(
    const std::vector<std::string>& paths) {
  std::vector<std::variant<Report, CeilingsReport>> documents;
  documents.reserve(paths.size());
  for (const std::string& path : paths) documents.push_back(read_report_or_ceilings(path));
  return documents;
}

int run(const AuditOptions& options) {
  std::vector<std::string> inputs = options.files;
  inputs.insert(inputs.end(), options.plugins.begin(), options.plugins.end());
  const OutputFiles outputs = evidence_outputs(inputs, {{"--json", options.json_path}});
  const auto documents = read_documents(options.files);
  std::vector<Report> reports;
  std::vector<std::string> report_files;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    if (const Report* report = std::get_if<Report>(&documents[i])) {
      reports.push_back(*report);
      report_files.push_back(options.files[i]);
    }
  }
  const std::vector<evidence::PluginByteSource> plugins =
      plugin_byte_sources(options.plugins, reports, report_files);
  std::ostream& screen = outputs.takes_stdout() ? std::cerr : std::cout;
  nlohmann::json files = nlohmann::json::array();
  bool all_consistent = true;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const Report* report = std::get_if<Report>(&documents[i]);
    const evidence::AuditResult result =
        report ? evidence::audit_report(*report, {}, plugins)
               : evidence::audit_ceilings(std::get<CeilingsReport>(documents[i]));
    screen << evidence::render_audit(result, options.files[i]);
    all_consistent = all_consistent && result.consistent();
    nlohmann::json entry = evidence::to_json(result);
    entry["file"] = options.files[i];
    entry["schema"] = report ? report->schema : std::get<CeilingsReport>(documents[i]).schema;
    files.push_back(entry);
  }
  screen << std::flush;
  if (outputs.has("--json")) {
    const nlohmann::json document{
        {"schema", "cuflash-roofline/audit/v1"}, {"consistent", all_consistent}, {"files", files}};
    outputs.write({{"--json", json_text(document)}});
  }
  return all_consistent ? exit_code::ok : exit_code::verdict;
}

}  // namespace

void add_audit_command(CLI::App& app, CommandStatus& status) {
  auto options = std::make_shared<AuditOptions>();
  CLI::App* command = app.add_subcommand(
      "audit",
      "recompute every derived figure of reports (sweep, model, historical or ceilings) and check "
      "their auditable flag (exit 0: consistent, 1: findings, 2: unusable file)");
  add_input_option(*command, "reports", options->files,
                   "report JSON files (sweep, model, historical or ceilings reports)")
      ->required();
  add_output_option(*command, "--json", options->json_path, "also write the findings as JSON");
  add_plugin_option(*command, options->plugins,
                    "the plugin whose kernels counted the bytes of `plugin` rows: count them "
                    "again (repeatable; its SHA-256 must be the report's; docs/plugins.md)");
  add_version_flag(*command);
  command->callback([options, &status] { status.exit_status = run(*options); });
}

}  // namespace cfr::app
