#include "report_json.hpp"

#include "json_reader.hpp"
#include "report_values.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace cfr {

namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json peaks_json(const std::array<std::optional<double>, all_compute_units.size()>& peaks) {
  json out = json::object();
  for (ComputeUnit unit : all_compute_units) {
    out[std::string(to_string(unit))] = optional_number(peaks[static_cast<std::size_t>(unit)]);
  }
  return out;
}

json timing_json(const Timing& t) {
  return json{{"samples_ms", t.samples_ms},
              {"warmup", t.warmup},
              {"median_ms", t.median_ms},
              {"min_ms", t.min_ms},
              {"max_ms", t.max_ms},
              {"mean_ms", t.mean_ms},
              {"stdev_ms", t.stdev_ms},
              {"q1_ms", t.q1_ms},
              {"q3_ms", t.q3_ms},
              {"l2_flush", t.l2_flush},
              {"sm_clock_MHz", t.sm_clock_MHz},
              {"sm_clock_min_MHz", t.sm_clock_min_MHz},
              {"throttled", t.throttled},
              {"throttled_discarded", t.throttled_discarded},
              {"noise_target_met", t.noise_target_met},
              {"stop_reason", t.stop_reason}};
}

json correctness_json(const Correctness& c) {
  json tensors = json::array();
  for (const TensorError& e : c.tensors) {
    tensors.push_back(
        {{"tensor", e.tensor}, {"rel_l2_err", e.rel_l2_err}, {"max_abs_err", e.max_abs_err}});
  }
  return json{{"reference", c.reference},     {"rel_l2_err", c.rel_l2_err},
              {"max_abs_err", c.max_abs_err}, {"tolerance", c.tolerance},
              {"passed", c.passed},           {"tensors", tensors}};
}

json claimed_json(const ClaimedFigures& c) {
  return json{{"source", c.source},
              {"time_ms", c.time_ms},
              {"flops_G", c.flops_G},
              {"TFLOPs", c.TFLOPs},
              {"traffic_GB", c.traffic_GB},
              {"bandwidth_GBps", c.bandwidth_GBps},
              {"bandwidth_utilization_percent", c.bandwidth_utilization_percent},
              {"ai_eff", c.ai_eff},
              {"regime", c.regime},
              {"ridge_distance", c.ridge_distance}};
}

// ---- reading ---------------------------------------------------------------

ClaimedFigures read_claimed(const Node& n) {
  ClaimedFigures c;
  c.source = n.string("source");
  c.time_ms = n.number("time_ms");
  c.flops_G = n.number("flops_G");
  c.TFLOPs = n.number("TFLOPs");
  c.traffic_GB = n.number("traffic_GB");
  c.bandwidth_GBps = n.number("bandwidth_GBps");
  c.bandwidth_utilization_percent = n.number("bandwidth_utilization_percent");
  c.ai_eff = n.number("ai_eff");
  c.regime = n.string("regime");
  c.ridge_distance = n.number("ridge_distance");
  return c;
}

std::optional<Direction> parse_direction(std::string_view text) {
  if (text == "forward") return Direction::forward;
  if (text == "backward") return Direction::backward;
  return std::nullopt;
}

std::optional<RowStatus> parse_status(std::string_view text) {
  for (RowStatus s : {RowStatus::ok, RowStatus::skipped, RowStatus::failed}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

std::optional<Regime> parse_regime(std::string_view text) {
  for (Regime r : {Regime::memory_bound, Regime::compute_bound}) {
    if (text == to_string(r)) return r;
  }
  return std::nullopt;
}

std::optional<ProvenanceSource> parse_source(std::string_view text) {
  for (auto s :
       {ProvenanceSource::model, ProvenanceSource::measured, ProvenanceSource::historical}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

std::vector<std::string> strings(const Node& node, std::string_view key) {
  std::vector<std::string> out;
  const json& list = node.array(key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw ReportError(fmt::format("{}[{}]: expected a string", node.key_path(key), i));
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

std::array<std::optional<double>, all_compute_units.size()> read_peaks(const Node& peaks) {
  std::array<std::optional<double>, all_compute_units.size()> out;
  for (ComputeUnit unit : all_compute_units) {
    out[static_cast<std::size_t>(unit)] = peaks.optional_number(to_string(unit));
  }
  return out;
}

Timing read_timing(const Node& n) {
  Timing t;
  const json& samples = n.array("samples_ms");
  t.samples_ms.reserve(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].is_number() || !std::isfinite(samples[i].get<double>())) {
      throw ReportError(
          fmt::format("{}[{}]: expected a finite number", n.key_path("samples_ms"), i));
    }
    t.samples_ms.push_back(samples[i].get<double>());
  }
  t.warmup = n.int32("warmup");
  t.median_ms = n.number("median_ms");
  t.min_ms = n.number("min_ms");
  t.max_ms = n.number("max_ms");
  t.mean_ms = n.number("mean_ms");
  t.stdev_ms = n.number("stdev_ms");
  t.q1_ms = n.number("q1_ms");
  t.q3_ms = n.number("q3_ms");
  t.l2_flush = n.boolean("l2_flush");
  t.sm_clock_MHz = n.number("sm_clock_MHz");
  if (n.has("sm_clock_min_MHz")) t.sm_clock_min_MHz = n.number("sm_clock_min_MHz");
  if (n.has("throttled")) t.throttled = n.boolean("throttled");
  if (n.has("throttled_discarded")) t.throttled_discarded = n.int32("throttled_discarded");
  if (n.has("noise_target_met")) t.noise_target_met = n.boolean("noise_target_met");
  if (n.has("stop_reason")) t.stop_reason = n.string("stop_reason");
  return t;
}

Correctness read_correctness(const Node& n) {
  Correctness c;
  c.reference = n.string("reference");
  c.rel_l2_err = n.number("rel_l2_err");
  c.max_abs_err = n.number("max_abs_err");
  c.tolerance = n.number("tolerance");
  c.passed = n.boolean("passed");
  if (n.has("tensors")) {
    const json& list = n.array("tensors");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Node e(list[i], fmt::format("{}[{}]", n.key_path("tensors"), i));
      c.tensors.push_back({e.string("tensor"), e.number("rel_l2_err"), e.number("max_abs_err")});
    }
  }
  return c;
}

TrafficEstimate read_traffic(const Node& n) {
  TrafficEstimate t;
  t.model = n.named("model", parse_traffic_model, "traffic model");
  t.bytes = n.number("bytes");
  t.compulsory_bytes = n.number("compulsory_bytes");
  const Node breakdown = n.object("breakdown");
  for (const auto& [tensor, value] : n.get("breakdown").items()) {
    t.breakdown.push_back({tensor, breakdown.number(tensor)});
  }
  return t;
}

FlopCounts read_flops(const Node& n) {
  FlopCounts f;
  f.dense = n.number("dense");
  f.exact = n.number("exact");
  f.half = n.number("half");
  f.softmax = n.has("softmax") ? n.number("softmax") : 0;
  f.convention = n.named("convention", parse_flop_convention, "FLOP convention");
  return f;
}

ResultRow read_row(const Node& n) {
  ResultRow row;
  row.kernel = n.string("kernel");
  row.direction = n.named("direction", parse_direction, "direction");
  row.dtype = n.named("dtype", parse_dtype, "dtype");
  row.batch = n.integer("batch");
  row.heads = n.integer("heads");
  row.seq_len = n.integer("seq_len");
  row.head_dim = n.integer("head_dim");
  row.causal = n.boolean("causal");
  if (n.has("tile")) {
    const Node tile = n.object("tile");
    row.tile = {tile.int32("br"), tile.int32("bc")};
  }
  row.compute_unit = n.named("compute_unit", parse_compute_unit, "compute unit");
  row.status = n.named("status", parse_status, "status");
  row.reason = n.string("reason");
  if (n.has("flops")) row.flops = read_flops(n.object("flops"));
  if (n.has("traffic")) row.traffic = read_traffic(n.object("traffic"));
  row.ai = n.has("ai") ? n.number("ai") : 0;
  row.ridge = n.optional_number("ridge");
  row.ridge_distance = n.optional_number("ridge_distance");
  if (n.has("regime")) row.regime = n.named("regime", parse_regime, "regime");
  row.roof_TFLOPs = n.optional_number("roof_TFLOPs");
  row.roof_time_ms = n.optional_number("roof_time_ms");
  if (n.has("device")) row.device = n.int32("device");
  if (n.has("timing")) row.timing = read_timing(n.object("timing"));
  if (n.has("achieved")) {
    const Node a = n.object("achieved");
    row.achieved = Achieved{a.number("TFLOPs"), a.number("bandwidth_GBps"),
                            a.number("bandwidth_utilization"), a.number("fraction_of_roof")};
  }
  if (n.has("correctness")) row.correctness = read_correctness(n.object("correctness"));
  if (n.has("claimed")) row.claimed = read_claimed(n.object("claimed"));
  if (row.status == RowStatus::ok && (!n.has("flops") || !n.has("traffic"))) {
    n.fail("a row with status ok needs flops and traffic");
  }
  return row;
}

}  // namespace

std::string_view to_string(ProvenanceSource source) {
  switch (source) {
    case ProvenanceSource::model: return "model";
    case ProvenanceSource::measured: return "measured";
    case ProvenanceSource::historical: return "historical";
  }
  return "?";
}

std::string_view to_string(RowStatus status) {
  switch (status) {
    case RowStatus::ok: return "ok";
    case RowStatus::skipped: return "skipped";
    case RowStatus::failed: return "failed";
  }
  return "?";
}

json to_json(const ResultRow& row) {
  json out{
      {"kernel", row.kernel},
      {"direction", to_string(row.direction)},
      {"dtype", to_string(row.dtype)},
      {"batch", row.batch},
      {"heads", row.heads},
      {"seq_len", row.seq_len},
      {"head_dim", row.head_dim},
      {"causal", row.causal},
      {"tile", row.tile.tiled() ? json{{"br", row.tile.br}, {"bc", row.tile.bc}} : json(nullptr)},
      {"compute_unit", to_string(row.compute_unit)},
      {"status", to_string(row.status)},
      {"reason", row.reason}};
  if (row.traffic.bytes > 0) {
    json breakdown = json::object();
    for (const TensorBytes& entry : row.traffic.breakdown) breakdown[entry.tensor] = entry.bytes;
    out["flops"] = {{"dense", row.flops.dense},
                    {"exact", row.flops.exact},
                    {"half", row.flops.half},
                    {"softmax", row.flops.softmax},
                    {"convention", to_string(row.flops.convention)}};
    out["traffic"] = {{"model", to_string(row.traffic.model)},
                      {"bytes", row.traffic.bytes},
                      {"breakdown", breakdown},
                      {"compulsory_bytes", row.traffic.compulsory_bytes}};
    out["ai"] = row.ai;
  }
  out["ridge"] = optional_number(row.ridge);
  out["ridge_distance"] = optional_number(row.ridge_distance);
  out["regime"] = row.regime ? json(to_string(*row.regime)) : json(nullptr);
  out["roof_TFLOPs"] = optional_number(row.roof_TFLOPs);
  out["roof_time_ms"] = optional_number(row.roof_time_ms);
  if (row.device) out["device"] = *row.device;
  if (row.timing) out["timing"] = timing_json(*row.timing);
  if (row.achieved) {
    out["achieved"] = {{"TFLOPs", row.achieved->TFLOPs},
                       {"bandwidth_GBps", row.achieved->bandwidth_GBps},
                       {"bandwidth_utilization", row.achieved->bandwidth_utilization},
                       {"fraction_of_roof", row.achieved->fraction_of_roof}};
  }
  if (row.correctness) out["correctness"] = correctness_json(*row.correctness);
  if (row.claimed) out["claimed"] = claimed_json(*row.claimed);
  return out;
}

json to_json(const ToolInfo& tool) {
  return {{"name", tool.name},
          {"version", tool.version},
          {"git_commit", tool.git_commit},
          {"git_dirty", tool.git_dirty},
          {"build_type", tool.build_type},
          {"cuda_archs", tool.cuda_archs}};
}

json to_json(const Provenance& provenance) {
  return {{"source", to_string(provenance.source)}, {"auditable", provenance.auditable},
          {"reasons", provenance.reasons},          {"created_utc", provenance.created_utc},
          {"command", provenance.command},          {"host", provenance.host}};
}

json to_json(const DeviceRecord& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"cc", d.cc},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"memory_bytes", d.memory_bytes},
          {"clock_MHz", d.clock_MHz},
          {"memory_clock_MHz", d.memory_clock_MHz},
          {"driver", d.driver},
          {"runtime", d.runtime},
          {"pci_bus_id", d.pci_bus_id}};
}

ToolInfo read_tool(const Node& tool) {
  ToolInfo info;
  info.name = tool.string("name");
  info.version = tool.string("version");
  info.git_commit = tool.string("git_commit");
  info.git_dirty = tool.boolean("git_dirty");
  if (tool.has("build_type")) info.build_type = tool.string("build_type");
  if (tool.has("cuda_archs")) info.cuda_archs = tool.string("cuda_archs");
  return info;
}

Provenance read_provenance(const Node& provenance) {
  Provenance p;
  p.source = provenance.named("source", parse_source, "provenance source");
  p.auditable = provenance.boolean("auditable");
  p.reasons = strings(provenance, "reasons");
  p.created_utc = provenance.string("created_utc");
  p.command = provenance.string("command");
  if (provenance.has("host")) p.host = provenance.string("host");
  return p;
}

DeviceRecord read_device(const Node& n) {
  DeviceRecord d;
  d.index = n.int32("index");
  d.name = n.string("name");
  d.cc = n.string("cc");
  d.sm_count = n.int32("sm_count");
  d.l2_bytes = n.number("l2_bytes");
  d.memory_bytes = n.number("memory_bytes");
  d.clock_MHz = n.number("clock_MHz");
  d.memory_clock_MHz = n.number("memory_clock_MHz");
  d.driver = n.string("driver");
  d.runtime = n.string("runtime");
  d.pci_bus_id = n.string("pci_bus_id");
  return d;
}

json to_json(const Report& report) {
  json devices = json::array();
  for (const DeviceRecord& d : report.devices) devices.push_back(to_json(d));
  json results = json::array();
  for (const ResultRow& row : report.results) results.push_back(to_json(row));
  const CeilingRecord& c = report.ceiling;
  return json{{"schema", report.schema},
              {"tool", to_json(report.tool)},
              {"provenance", to_json(report.provenance)},
              {"devices", devices},
              {"ceiling",
               {{"gpu", c.gpu},
                {"gpu_name", c.gpu_name},
                {"source", c.source},
                {"source_detail", c.source_detail},
                {"bandwidth_GBps", c.bandwidth_GBps},
                {"peak_TFLOPs", peaks_json(c.peak_TFLOPs)},
                {"matches_device", c.matches_device ? json(*c.matches_device) : json(nullptr)}}},
              {"results", results}};
}

Report report_from_json(const json& document) {
  const Node top(document, "");
  Report report;
  report.schema = top.string("schema");
  if (report.schema != report_schema) {
    throw ReportError(
        fmt::format("schema: expected '{}', found '{}'", report_schema, report.schema));
  }
  report.tool = read_tool(top.object("tool"));
  report.provenance = read_provenance(top.object("provenance"));

  const json& devices = top.array("devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    report.devices.push_back(read_device(Node(devices[i], fmt::format("devices[{}]", i))));
  }

  const Node ceiling = top.object("ceiling");
  report.ceiling.gpu = ceiling.string("gpu");
  if (ceiling.has("gpu_name")) report.ceiling.gpu_name = ceiling.string("gpu_name");
  report.ceiling.source = ceiling.string("source");
  if (ceiling.has("source_detail")) report.ceiling.source_detail = ceiling.string("source_detail");
  report.ceiling.bandwidth_GBps = ceiling.number("bandwidth_GBps");
  report.ceiling.peak_TFLOPs = read_peaks(ceiling.object("peak_TFLOPs"));
  if (ceiling.has("matches_device"))
    report.ceiling.matches_device = ceiling.boolean("matches_device");

  const json& results = top.array("results");
  report.results.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    report.results.push_back(read_row(Node(results[i], fmt::format("results[{}]", i))));
  }
  check_report_values(report);
  return report;
}

}  // namespace cfr
