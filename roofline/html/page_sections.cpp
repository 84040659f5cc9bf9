#include "page_sections.hpp"

#include <fmt/format.h>

#include "html_table.hpp"
#include "roofline/evidence/xml_text.hpp"

namespace cfr::html {

namespace {

using evidence::xml_escape;

std::string entry(std::string_view term, std::string_view value) {
  return fmt::format("<dt>{}</dt><dd>{}</dd>\n", xml_escape(term), xml_escape(value));
}

std::string tool_line(const ToolInfo& tool) {
  return fmt::format("{} {}, commit {}{} ({}, CUDA archs {})", tool.name, tool.version,
                     tool.git_commit.empty() ? "unknown" : tool.git_commit,
                     tool.git_dirty ? " (dirty tree)" : "", tool.build_type, tool.cuda_archs);
}

std::string device_line(const DeviceRecord& d) {
  return fmt::format("{} (cc {}, {} SMs), driver {}, runtime {}, PCI {}", d.name, d.cc, d.sm_count,
                     d.driver, d.runtime, d.pci_bus_id);
}

std::string ceiling_line(const CeilingRecord& c) {
  std::string out =
      fmt::format("{} ({}), {}: DRAM {:.4g} GB/s", c.gpu_name, c.gpu, c.source, c.bandwidth_GBps);
  if (c.l2_bandwidth_GBps) out += fmt::format(", L2 {:.4g} GB/s", *c.l2_bandwidth_GBps);
  for (ComputeUnit unit : all_compute_units) {
    if (const auto peak = c.peak(unit))
      out += fmt::format(", {} {:.4g} TFLOP/s", to_string(unit), *peak);
  }
  return out + (c.source_detail.empty() ? "" : "; from " + c.source_detail);
}

std::string reasons_list(const std::vector<std::string>& reasons) {
  if (reasons.empty()) return "";
  std::string out = "<dt>reasons</dt><dd><ul class=\"reasons\">\n";
  for (const std::string& reason : reasons) out += "<li>" + xml_escape(reason) + "</li>\n";
  return out + "</ul></dd>\n";
}

std::string finding_item(const evidence::Finding& f) {
  return fmt::format("<li class=\"finding {0}\"><strong>{0}</strong> {1}: {2}</li>\n",
                     to_string(f.kind), xml_escape(f.where), xml_escape(f.message));
}

std::string milliseconds(const std::optional<double>& ms) {
  return ms ? fmt::format("{:.4g}", *ms) : "-";
}

}  // namespace

std::string provenance_section(const Report& report) {
  const Provenance& p = report.provenance;
  std::string out = "<h3>Provenance</h3>\n<dl class=\"provenance\">\n";
  out += entry("tool", tool_line(report.tool));
  out += entry("source", to_string(p.source));
  out += fmt::format("<dt>auditable</dt><dd class=\"auditable-{0}\">{0}</dd>\n",
                     p.auditable ? "yes" : "no");
  out += reasons_list(p.reasons);
  out += entry("created (UTC)", p.created_utc);
  out += entry("host", p.host);
  out += entry("command", p.command);
  for (const DeviceRecord& d : report.devices) {
    out += entry(fmt::format("device {}", d.index), device_line(d));
  }
  out += entry("ceiling", ceiling_line(report.ceiling));
  for (const PluginKernelRecord& plugin : p.plugins) {
    out += entry("plugin kernel", fmt::format("{} {} from {} (SHA-256 {})", plugin.kernel,
                                              plugin.version, plugin.file, plugin.sha256));
  }
  for (const auto& [name, version] : p.environment) out += entry(name, version);
  return out + "</dl>\n";
}

std::string audit_section(const evidence::AuditResult& audit) {
  const std::size_t failing = audit.failing();
  std::string out = fmt::format(
      "<h3>Audit, run when this page was made</h3>\n<p class=\"audit-verdict\" "
      "data-consistent=\"{}\">",
      audit.consistent() ? "true" : "false");
  out += audit.consistent()
             ? fmt::format("Consistent: {} figures re-derived over {} {}; no finding fails.",
                           audit.figures_checked, audit.rows, audit.rows_are)
             : fmt::format("INCONSISTENT: {} finding{} fail ({} figures re-derived over {} {}).",
                           failing, failing == 1 ? "" : "s", audit.figures_checked, audit.rows,
                           audit.rows_are);
  out += "</p>\n";
  if (audit.findings.empty()) return out;
  out += "<ul class=\"findings\">\n";
  for (const bool fails : {true, false}) {
    for (const evidence::Finding& f : audit.findings) {
      if (f.fails() == fails) out += finding_item(f);
    }
  }
  return out + "</ul>\n";
}

std::string comparison_section(const evidence::Comparison& comparison) {
  std::string out;
  for (const std::string& label : comparison.labels) {
    out += "<p class=\"comparison-label\">" + xml_escape(label) + "</p>\n";
  }
  out += "<p class=\"verdict-counts\">" +
         xml_escape(evidence::render_verdict_counts({comparison})) + "; " +
         xml_escape(evidence::render_geometric_mean(evidence::geometric_mean({comparison}))) +
         "</p>\n";
  // Kernels set against others (--by shape): one mean per pairing, as `compare` prints them.
  for (const evidence::PairingMean& pairing : evidence::geometric_means_by_pairing(comparison)) {
    out += fmt::format("<p class=\"pairing-mean\">{} over {}: {}</p>\n", xml_escape(pairing.kernel),
                       xml_escape(pairing.base_kernel),
                       xml_escape(evidence::render_geometric_mean(pairing.mean)));
  }
  if (comparison.slower_base_rows > 0) {
    out += fmt::format(
        "<p class=\"slower-base-rows\">{} base rows left out: another base row of their shape "
        "was faster.</p>\n",
        comparison.slower_base_rows);
  }
  HtmlTable table{.id = "comparison-table",
                  .caption =
                      "Each configuration in both reports: new / base median time, and "
                      "the verdict of the medians and the raw samples",
                  .headers = {"kernel", "base kernel", "configuration", "base ms", "new ms",
                              "new/base", "threshold %", "verdict", "basis", "note"},
                  .rows = {}};
  for (const evidence::RowComparison& r : comparison.rows) {
    const bool timed = r.base_ms && r.new_ms;
    table.rows.push_back(
        {.cells = {r.key.kernel, r.base_kernel.empty() ? r.key.kernel : r.base_kernel,
                   evidence::describe(r.key), milliseconds(r.base_ms), milliseconds(r.new_ms),
                   timed ? fmt::format("{:.4f}", r.ratio) : "-",
                   timed ? fmt::format("{:.2f}", 100 * r.threshold) : "-",
                   std::string(evidence::to_string(r.verdict)),
                   std::string(evidence::to_string(r.basis)), r.note},
         .status = std::string(evidence::to_string(r.verdict))});
  }
  return out + render_html_table(table);
}

}  // namespace cfr::html
