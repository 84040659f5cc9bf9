#include "historical.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/file_name_part.hpp"
#include "roofline/report/json_reader.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::evidence {

namespace {

// What the seed says v0.4.0 was: the FA1 structure with one CTA per Q block
// streaming every K/V block (§3.2), Br = Bc = 64 at d = 64 for the forward
// (§4.1, §4.2), so K and V are reloaded once per Q block: our kv_reload
// model. It is judged against the fp16 tensor-core roof because the seed's
// A100 and H100 ridge points (153 and 295 FLOP/byte, §2) are the tensor-core
// ones; `audit` points out that its V100 ridge (34.9) is not.
// Its analysis names the tiles and no more: warps, stages, CTAs per SM and
// launch order stay undeclared (0, none).
inline constexpr std::array<int, 3> seed_v040_head_dims{32, 64, 128};
inline constexpr std::array<ConfigRule, 2> seed_v040_configs{{
    {.max_head_dim = 64, .config = {.tile = {64, 64}}},
    {.max_head_dim = 128, .config = {.tile = {32, 32}}},
}};
inline constexpr KernelDescription seed_v040_kernel{
    .name = "cuflash-attn-v0.4.0",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = false, .fp32 = false},
    .head_dims = seed_v040_head_dims,
    .min_compute_capability = {7, 0},
    .configs = seed_v040_configs,
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "the seed's v0.4.0 forward as its analysis describes it (not a kernel we run)",
};
static_assert(!description_error(seed_v040_kernel));

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

double positive(const Node& node, std::string_view key) {
  const double value = node.number(key);
  if (value <= 0) {
    throw InputError(fmt::format("{}: must be positive, found {:g}", node.key_path(key), value));
  }
  return value;
}

HistoricalRow read_row(const Node& n, std::string_view document) {
  HistoricalRow row;
  row.gpu = n.string("gpu");
  row.seq_len = n.integer("seq_len");
  if (row.seq_len <= 0) {
    throw InputError(
        fmt::format("{}: must be positive, found {}", n.key_path("seq_len"), row.seq_len));
  }
  ClaimedFigures& c = row.claimed;
  c.source = std::string(document);
  c.time_ms = positive(n, "time_ms");
  c.flops_G = positive(n, "flops_G");
  c.TFLOPs = positive(n, "TFLOPs");
  c.traffic_GB = positive(n, "traffic_GB");
  c.bandwidth_GBps = positive(n, "bandwidth_GBps");
  c.bandwidth_utilization_percent = positive(n, "bandwidth_utilization_percent");
  c.ai_eff = positive(n, "ai_eff");
  c.regime = n.string("regime");
  c.ridge_distance = positive(n, "ridge_distance");
  return row;
}

}  // namespace

std::vector<std::string> HistoricalTable::gpus() const {
  std::vector<std::string> out;
  for (const HistoricalRow& row : rows) {
    if (std::find(out.begin(), out.end(), row.gpu) == out.end()) out.push_back(row.gpu);
  }
  return out;
}

HistoricalTable parse_historical_table(const nlohmann::json& document) {
  const Node top(document, "");
  const std::string schema = top.string("schema");
  if (schema != historical_schema) {
    throw InputError(fmt::format("schema: expected '{}', found '{}'", historical_schema, schema));
  }
  HistoricalTable table;
  table.name = top.string("name");
  // The name becomes part of a file name (NAME-GPU.json in --out-dir).
  if (!is_file_name_part(table.name)) {
    throw InputError(fmt::format(
        "name: '{}' must be letters, digits, '_', '-' or '.' (not first): it names files",
        table.name));
  }
  table.kernel = top.string("kernel");
  table.document = top.string("document");

  const Node provenance = top.object("provenance");
  const std::string source = provenance.string("source");
  if (source != "historical") {
    throw InputError(fmt::format("provenance.source: expected 'historical', found '{}'", source));
  }
  if (provenance.boolean("auditable")) {
    throw InputError("provenance.auditable: a table typed in from a document is never auditable");
  }
  const nlohmann::json& reasons = provenance.array("reasons");
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    if (!reasons[i].is_string()) {
      throw InputError(fmt::format("provenance.reasons[{}]: expected a string", i));
    }
    table.reasons.push_back(reasons[i].get<std::string>());
  }
  if (table.reasons.empty()) {
    throw InputError("provenance.reasons: the document's caveats are required");
  }

  const Node config = top.object("configuration");
  table.direction = config.named("direction", parse_direction, "direction");
  if (table.direction != seed_v040_kernel.direction) {
    throw InputError("configuration.direction: the historical kernel model is a forward kernel");
  }
  table.shape.dtype = config.named("dtype", parse_dtype, "dtype");
  table.shape.batch = config.integer("batch");
  table.shape.heads = config.integer("heads");
  table.shape.head_dim = config.integer("head_dim");
  table.shape.causal = config.boolean("causal");
  for (const auto& [key, value] :
       {std::pair{"batch", table.shape.batch}, std::pair{"heads", table.shape.heads},
        std::pair{"head_dim", table.shape.head_dim}}) {
    if (value <= 0) {
      throw InputError(fmt::format("configuration.{}: must be positive, found {}", key, value));
    }
  }

  const nlohmann::json& rows = top.array("rows");
  if (rows.empty()) throw InputError("rows: the table has no rows");
  if (rows.size() > max_historical_rows) {
    throw InputError(fmt::format("rows: {} rows, more than the {} a historical table may have",
                                 rows.size(), max_historical_rows));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    table.rows.push_back(read_row(Node(rows[i], fmt::format("rows[{}]", i)), table.document));
    // One row per GPU and N: a report holds one row per configuration.
    for (std::size_t j = 0; j < i; ++j) {
      if (table.rows[j].gpu == table.rows[i].gpu &&
          table.rows[j].seq_len == table.rows[i].seq_len) {
        throw InputError(fmt::format("rows[{}]: repeats rows[{}] ({}, N = {})", i, j,
                                     table.rows[i].gpu, table.rows[i].seq_len));
      }
    }
  }
  return table;
}

const GpuSpec& historical_gpu(const HistoricalTable& table, std::string_view gpu,
                              const GpuTable& gpus) {
  const GpuSpec* spec = gpus.find(lowercase(gpu));
  if (spec != nullptr) return *spec;
  std::size_t index = 0;
  while (index < table.rows.size() && table.rows[index].gpu != gpu) ++index;
  std::string known;
  for (const std::string& id : gpus.ids()) known += (known.empty() ? "" : ", ") + id;
  throw InputError(fmt::format("rows[{}].gpu: '{}' is not in the GPU table {} (known: {})", index,
                               gpu, gpus.origin, known));
}

Report historical_report(const HistoricalTable& table, std::string_view gpu, const GpuTable& gpus) {
  const std::vector<std::string> names = table.gpus();
  if (std::find(names.begin(), names.end(), gpu) == names.end()) {
    std::string known;
    for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument(
        fmt::format("the table has no rows for GPU '{}' (it has {})", gpu, known));
  }
  const GpuSpec& spec = historical_gpu(table, gpu, gpus);
  Report report;
  report.provenance.source = ProvenanceSource::historical;
  report.provenance.auditable = false;
  report.provenance.reasons = table.reasons;
  report.provenance.reasons.emplace_back(no_samples_reason);
  report.provenance.reasons.push_back(
      fmt::format("figures copied by hand from {} ({} table), not measured by this tool",
                  table.document, table.name));
  report.ceiling = datasheet_ceiling(spec, gpus.origin);

  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const HistoricalRow& source = table.rows[i];
    if (source.gpu != gpu) continue;
    AttentionProblem problem = table.shape;
    problem.seq_len = source.seq_len;
    ResultRow row = model_row(seed_v040_kernel, problem, report.ceiling, FlopConvention::exact);
    if (row.status != RowStatus::ok) {
      throw InputError(fmt::format("rows[{}]: {}", i, row.reason));
    }
    row.kernel = table.kernel;
    row.timing = Timing{};
    row.timing->summary.median = source.claimed.time_ms;
    row.timing->l2_flush = false;  // unknown; not claimed
    row.timing->stop_reason = "historical: one time as the document printed it, no samples kept";
    row.achieved = achieved_figures(*row.model, source.claimed.time_ms, report.ceiling);
    row.claimed = source.claimed;
    report.results.push_back(std::move(row));
  }
  return report;
}

}  // namespace cfr::evidence
