#include "roofline/report/report_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>
#include <variant>

#include "roofline/report/figures.hpp"
#include "roofline/report/json_reader.hpp"
#include "roofline/report/report_values.hpp"

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

}  // namespace

// The raw part of a timing; its summary is figures (figures.cpp).
json timing_json(const Timing& t) {
  json out{{"samples_ms", t.samples_ms},
           {"warmup", t.warmup},
           {"l2_flush", t.l2_flush},
           {"sm_clock_MHz", t.sm_clock_MHz},
           {"sm_clock_min_MHz", t.sm_clock_min_MHz},
           {"throttled", t.throttled},
           {"throttled_discarded", t.throttled_discarded},
           {"throttle_threshold_percent", optional_number(t.throttle_threshold_percent)},
           {"kept_throttled", t.kept_throttled},
           {"noise_target_met", t.noise_target_met},
           {"stop_reason", t.stop_reason}};
  if (!t.l2_flush_mode.empty()) out["l2_flush_mode"] = t.l2_flush_mode;
  return out;
}

json process_timing_json(const ProcessTiming& t) {
  return {{"samples_ms", t.samples_ms},
          {"sm_clock_MHz", t.sm_clock_MHz},
          {"stream_blocked", t.stream_blocked}};
}

namespace {

json correctness_json(const Correctness& c) {
  json tensors = json::array();
  for (const TensorError& e : c.tensors) {
    tensors.push_back(
        {{"tensor", e.tensor}, {"rel_l2_err", e.rel_l2_err}, {"max_abs_err", e.max_abs_err}});
  }
  json out{{"reference", c.reference}, {"rel_l2_err", c.rel_l2_err}, {"max_abs_err", c.max_abs_err},
           {"tolerance", c.tolerance}, {"passed", c.passed},         {"tensors", tensors}};
  // The seed in hex: a 64-bit word a JSON reader may hold as a double.
  if (c.sample) {
    out["sample"] = {{"seed", fmt::format("{:#018x}", c.sample->seed)},
                     {"query_rows", c.sample->query_rows},
                     {"key_rows", c.sample->key_rows}};
  }
  return out;
}

// The counters and what ran them; profile_figures' results are figures.
json profile_json(const Profile& p) {
  json counters = json::array();
  for (const ProfileCounter& c : p.counters) {
    counters.push_back({{"metric", c.metric},
                        {"unit", c.unit},
                        {"value", c.value ? json(*c.value) : json(nullptr)},
                        {"note", c.note}});
  }
  json out{{"tool", p.tool},
           {"version", p.version},
           {"command", p.command},
           {"unavailable", p.unavailable},
           {"counters", counters}};
  if (p.launches) {
    json values = json::array();
    for (const std::optional<double>& value : p.launches->values) {
      values.push_back(value ? json(*value) : json(nullptr));
    }
    out["launches"] = {{"warmup", p.launches->warmup},
                       {"metric", p.launches->metric},
                       {"values", values},
                       {"recorded", p.launches->recorded}};
  }
  if (p.process_timing) out["process_timing"] = process_timing_json(*p.process_timing);
  if (p.timer_floor) {
    json durations = json::array();
    for (const std::optional<double>& value : p.timer_floor->ncu_ns) {
      durations.push_back(value ? json(*value) : json(nullptr));
    }
    out["timer_floor"] = {{"kernels", p.timer_floor->kernels},
                          {"events", process_timing_json(p.timer_floor->events)},
                          {"ncu_ns", durations}};
  }
  return out;
}

// The counter's readings as [seconds, millijoules] pairs: a run keeps
// hundreds of them.
json readings_json(const std::vector<CounterReading>& readings) {
  json out = json::array();
  for (const CounterReading& r : readings) out.push_back(json::array({r.t_s, r.mJ}));
  return out;
}

}  // namespace

json energy_json(const Energy& e) {
  json probes = json::array();
  for (const EnergyProbe& p : e.probes) {
    probes.push_back({{"t_s", p.t_s},
                      {"sm_clock_MHz", p.sm_clock_MHz},
                      {"temperature_C", p.temperature_C},
                      {"power_W", p.power_W}});
  }
  return {{"counter", e.counter},   {"unavailable", e.unavailable},
          {"launches", e.launches}, {"readings", readings_json(e.readings)},
          {"probes", probes},       {"idle_readings", readings_json(e.idle_readings)}};
}

namespace {

// A figure's key path, "timing.median_ms", split at the dots.
std::vector<std::string> keys_of(std::string_view path) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  for (std::size_t dot = path.find('.'); dot != std::string_view::npos;
       dot = path.find('.', start)) {
    keys.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  keys.emplace_back(path.substr(start));
  return keys;
}

// Every stored figure at its key path. An absent figure is null at the top
// level of the row and left out inside an object.
void write_figures(const ResultRow& row, json& out) {
  for (const Figure& figure : row_figures()) {
    if (figure.view()) continue;
    const FigureValue value = figure_value(figure, row);
    const std::vector<std::string> keys = keys_of(figure.json);
    if (std::holds_alternative<std::monostate>(value)) {
      if (keys.size() == 1) out[keys[0]] = nullptr;
      continue;
    }
    json* slot = &out;
    for (const std::string& key : keys) slot = &(*slot)[key];
    if (const double* number = std::get_if<double>(&value)) {
      *slot = *number;
    } else {
      *slot = std::get<std::string>(value);
    }
  }
}

// ---- reading ---------------------------------------------------------------

std::optional<ProvenanceSource> parse_source(std::string_view text) {
  for (auto s :
       {ProvenanceSource::model, ProvenanceSource::measured, ProvenanceSource::historical}) {
    if (text == to_string(s)) return s;
  }
  return std::nullopt;
}

// An object of strings, name -> version.
std::map<std::string, std::string> read_environment(const Node& node, std::string_view key) {
  const Node environment = node.object(key);
  std::map<std::string, std::string> out;
  for (const auto& [name, version] : node.get(key).items()) out[name] = environment.string(name);
  return out;
}

std::array<std::optional<double>, all_compute_units.size()> read_peaks(const Node& peaks) {
  std::array<std::optional<double>, all_compute_units.size()> out;
  for (ComputeUnit unit : all_compute_units) {
    out[static_cast<std::size_t>(unit)] = peaks.optional_number(to_string(unit));
  }
  return out;
}

std::vector<std::optional<double>> numbers_or_nulls(const Node& n, std::string_view key) {
  const json& values = n.array(key);
  std::vector<std::optional<double>> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const json& value = values[i];
    if (value.is_null()) {
      out.push_back(std::nullopt);
    } else if (value.is_number() && std::isfinite(value.get<double>())) {
      out.push_back(value.get<double>());
    } else {
      throw InputError(fmt::format("{}[{}]: expected a number or null", n.key_path(key), i));
    }
  }
  return out;
}

std::vector<double> finite_numbers(const Node& n, std::string_view key) {
  const json& values = n.array(key);
  std::vector<double> out;
  out.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i].is_number() || !std::isfinite(values[i].get<double>())) {
      throw InputError(fmt::format("{}[{}]: expected a finite number", n.key_path(key), i));
    }
    out.push_back(values[i].get<double>());
  }
  return out;
}

Profile read_profile(const Node& n) {
  Profile p;
  p.tool = n.string("tool");
  p.version = n.string("version");
  p.command = n.string("command");
  p.unavailable = n.string("unavailable");
  const json& list = n.array("counters");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node c(list[i], fmt::format("{}[{}]", n.key_path("counters"), i));
    p.counters.push_back(
        {c.string("metric"), c.string("unit"), c.optional_number("value"), c.string("note")});
  }
  if (n.has("launches")) {
    const Node l = n.object("launches");
    ProfileLaunches launches;
    launches.warmup = l.int32("warmup");
    launches.metric = l.string("metric");
    launches.values = numbers_or_nulls(l, "values");
    const std::int64_t recorded = l.integer("recorded");
    if (recorded < 0)
      throw InputError(fmt::format("{}: must not be negative", l.key_path("recorded")));
    launches.recorded = static_cast<std::size_t>(recorded);
    p.launches = std::move(launches);
  }
  if (n.has("process_timing")) p.process_timing = read_process_timing(n.object("process_timing"));
  if (n.has("timer_floor")) {
    const Node f = n.object("timer_floor");
    TimerFloor floor;
    floor.kernels = f.int32("kernels");
    if (floor.kernels < 1) {
      throw InputError(fmt::format("{}: must be at least 1", f.key_path("kernels")));
    }
    floor.events = read_process_timing(f.object("events"));
    floor.ncu_ns = numbers_or_nulls(f, "ncu_ns");
    for (std::size_t i = 0; i < floor.ncu_ns.size(); ++i) {
      if (floor.ncu_ns[i] && *floor.ncu_ns[i] < 0) {
        throw InputError(fmt::format("{}[{}]: must not be negative", f.key_path("ncu_ns"), i));
      }
    }
    p.timer_floor = std::move(floor);
  }
  return p;
}

// [seconds, millijoules] pairs; the millijoules an unsigned 64-bit count.
std::vector<CounterReading> read_readings(const Node& n, std::string_view key) {
  const json& list = n.array(key);
  std::vector<CounterReading> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& pair = list[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() ||
        !std::isfinite(pair[0].get<double>()) || !pair[1].is_number_unsigned()) {
      throw InputError(fmt::format("{}[{}]: expected [seconds, millijoules]", n.key_path(key), i));
    }
    out.push_back({pair[0].get<double>(), pair[1].get<std::uint64_t>()});
  }
  return out;
}

}  // namespace

Energy read_energy(const Node& n) {
  Energy e;
  e.counter = n.string("counter");
  e.unavailable = n.string("unavailable");
  e.launches = n.integer("launches");
  e.readings = read_readings(n, "readings");
  e.idle_readings = read_readings(n, "idle_readings");
  const json& list = n.array("probes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Node p(list[i], fmt::format("{}[{}]", n.key_path("probes"), i));
    e.probes.push_back({p.number("t_s"), p.number("sm_clock_MHz"), p.number("temperature_C"),
                        p.number("power_W")});
  }
  return e;
}

// The raw part of a timing; read_figures reads its summary.
Timing read_timing(const Node& n) {
  Timing t;
  t.samples_ms = finite_numbers(n, "samples_ms");
  t.summary.count = static_cast<int>(t.samples_ms.size());
  t.warmup = n.int32("warmup");
  t.l2_flush = n.boolean("l2_flush");
  if (n.has("l2_flush_mode")) {
    t.l2_flush_mode = n.string("l2_flush_mode");
    if (t.l2_flush_mode != "read" && t.l2_flush_mode != "memset") {
      throw InputError(fmt::format("{}: expected \"read\" or \"memset\", got \"{}\"",
                                   n.key_path("l2_flush_mode"), t.l2_flush_mode));
    }
  }
  t.sm_clock_MHz = n.number("sm_clock_MHz");
  if (n.has("sm_clock_min_MHz")) t.sm_clock_min_MHz = n.number("sm_clock_min_MHz");
  if (n.has("throttled")) t.throttled = n.boolean("throttled");
  if (n.has("throttled_discarded")) t.throttled_discarded = n.int32("throttled_discarded");
  if (n.has("throttle_threshold_percent")) {
    t.throttle_threshold_percent = n.optional_number("throttle_threshold_percent");
  }
  if (n.has("kept_throttled")) t.kept_throttled = n.boolean("kept_throttled");
  if (n.has("noise_target_met")) t.noise_target_met = n.boolean("noise_target_met");
  if (n.has("stop_reason")) t.stop_reason = n.string("stop_reason");
  return t;
}

// Samples are times, the clock a rate or 0 where the probe read none.
ProcessTiming read_process_timing(const Node& n) {
  ProcessTiming t;
  t.samples_ms = finite_numbers(n, "samples_ms");
  for (std::size_t i = 0; i < t.samples_ms.size(); ++i) {
    if (!(t.samples_ms[i] > 0)) {
      throw InputError(fmt::format("{}[{}]: must be positive, found {}", n.key_path("samples_ms"),
                                   i, t.samples_ms[i]));
    }
  }
  t.sm_clock_MHz = n.number("sm_clock_MHz");
  if (t.sm_clock_MHz < 0) {
    throw InputError(fmt::format("{}: must not be negative", n.key_path("sm_clock_MHz")));
  }
  t.stream_blocked = n.boolean("stream_blocked");
  return t;
}

namespace {

CheckSample read_check_sample(const Node& n) {
  CheckSample sample;
  const std::string seed = n.string("seed");
  const char* digits = seed.data() + std::min<std::size_t>(2, seed.size());
  const auto [end, error] = std::from_chars(digits, seed.data() + seed.size(), sample.seed, 16);
  if (!seed.starts_with("0x") || error != std::errc{} || end != seed.data() + seed.size() ||
      digits == end) {
    n.fail(fmt::format("seed '{}' is not a hex word (0x...)", seed));
  }
  sample.query_rows = n.integer("query_rows");
  sample.key_rows = n.integer("key_rows");
  return sample;
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
  if (n.has("sample")) c.sample = read_check_sample(n.object("sample"));
  return c;
}

// The parts of a row's model that are not figures: the FLOP convention, the
// kernel's traffic model and its per-tensor breakdown.
ModelFigures read_model(const Node& flops, const Node& traffic) {
  ModelFigures model;
  model.flops.convention = flops.named("convention", parse_flop_convention, "FLOP convention");
  model.traffic.model = traffic.named("model", parse_traffic_model, "traffic model");
  model.dram_model = model.traffic.model;  // reports from before traffic.dram_model
  if (traffic.has("l2_model")) {
    const Node l2 = traffic.object("l2_model");
    L2ModelInputs inputs;
    inputs.l2_bytes = l2.number("l2_bytes");
    inputs.l2_partitions = static_cast<int>(l2.integer("l2_partitions"));
    inputs.sm_count = static_cast<int>(l2.integer("sm_count"));
    inputs.cc = l2.named("cc", parse_compute_capability, "compute capability");
    inputs.source = l2.string("source");
    if (l2.has("loop_kept_bytes")) {
      inputs.loop_kept_bytes = l2.positive("loop_kept_bytes");
      inputs.loop_kept_source = l2.string("loop_kept_source");
    }
    // Reports from before model revisions were written by revision 1.
    inputs.revision = l2.has("revision") ? l2.int32("revision") : first_l2_model_revision;
    if (inputs.revision < first_l2_model_revision || inputs.revision > current_l2_model_revision) {
      throw InputError(fmt::format("{}: {} is not a model revision ({} to {})",
                                   l2.key_path("revision"), inputs.revision,
                                   first_l2_model_revision, current_l2_model_revision));
    }
    model.l2_inputs = inputs;
  }
  if (traffic.has("kv_splits")) model.traffic.kv_splits = traffic.int32("kv_splits");
  const Node breakdown = traffic.object("breakdown");
  for (const auto& [tensor, value] : traffic.get("breakdown").items()) {
    model.traffic.breakdown.push_back({tensor, breakdown.number(tensor)});
  }
  return model;
}

// Why a row has no place for a figure its JSON carries.
std::string_view why_absent(const ResultRow& row, FigureGroup group) {
  if (group == FigureGroup::roofline && row.model) return "ridge is null";
  if (group == FigureGroup::profile && row.model) return "the profile has no counters";
  if (group == FigureGroup::energy && row.model) return "energy.unavailable is not empty";
  return "the row has no flops and traffic";
}

// Every stored figure of the row's groups; the groups are already in place.
void read_figures(const Node& n, ResultRow& row) {
  for (const Figure& figure : row_figures()) {
    if (figure.view()) continue;
    const std::vector<std::string> keys = keys_of(figure.json);
    std::optional<Node> parent(n);
    for (std::size_t i = 0; i + 1 < keys.size() && parent; ++i) {
      if (parent->has(keys[i])) {
        parent.emplace(parent->object(keys[i]));
      } else {
        parent.reset();
      }
    }
    const std::string& key = keys.back();
    const bool written = parent && parent->has(key);
    const std::string path = n.key_path(figure.json);
    if (!has_group(row, figure.group)) {
      if (written) {
        throw InputError(fmt::format("{}: present, but {}", path, why_absent(row, figure.group)));
      }
      continue;
    }
    if (!written) {
      if (figure.optional_on_read) continue;
      throw InputError(fmt::format("{}: missing", path));
    }
    const FigureValue value =
        figure.word() ? FigureValue(parent->string(key)) : FigureValue(parent->number(key));
    if (!figure.store(row, value)) {
      throw InputError(
          fmt::format("{}: unknown {} '{}'", path, figure.label, std::get<std::string>(value)));
    }
  }
}

// Makes room for the groups of figures the row's JSON has.
void read_groups(const Node& n, ResultRow& row) {
  if (n.has("flops") != n.has("traffic")) {
    n.fail("flops and traffic come together; one of them is missing");
  }
  if (n.has("flops")) {
    row.model = read_model(n.object("flops"), n.object("traffic"));
    if (n.has("ridge")) row.model->roofline.emplace();
  }
  if (n.has("timing")) row.timing = read_timing(n.object("timing"));
  if (n.has("achieved")) {
    (void)n.object("achieved");
    row.achieved.emplace();
  }
  if (n.has("profile")) row.profile = read_profile(n.object("profile"));
  if (n.has("energy")) row.energy = read_energy(n.object("energy"));
  if (n.has("claimed")) {
    row.claimed.emplace();
    row.claimed->source = n.object("claimed").string("source");
  }
}

ResultRow read_row(const Node& n) {
  ResultRow row;
  row.kernel = n.string("kernel");
  row.direction = n.named("direction", parse_direction, "direction");
  row.problem = read_problem(n);
  if (n.has("kernel_revision")) row.kernel_revision = n.int32("kernel_revision");
  if (n.has("tile")) {
    const Node tile = n.object("tile");
    row.tile = {tile.int32("br"), tile.int32("bc")};
  }
  row.compute_unit = n.named("compute_unit", parse_compute_unit, "compute unit");
  row.status = n.named("status", parse_row_status, "status");
  row.reason = n.string("reason");
  read_groups(n, row);
  read_figures(n, row);
  if (n.has("device")) row.device = n.int32("device");
  if (n.has("correctness")) row.correctness = read_correctness(n.object("correctness"));
  if (row.status == RowStatus::ok && !row.model) {
    n.fail("a row with status ok needs flops and traffic");
  }
  return row;
}

}  // namespace

// kv_len, kv_heads and page_size only where the problem has them, so a
// square problem's row reads as it always has.
json problem_json(const AttentionProblem& p) {
  json out = {{"dtype", to_string(p.dtype)}, {"batch", p.batch},       {"heads", p.heads},
              {"seq_len", p.seq_len},        {"head_dim", p.head_dim}, {"causal", p.causal}};
  if (p.keys() != p.seq_len) out["kv_len"] = p.keys();
  if (p.key_heads() != p.heads) out["kv_heads"] = p.key_heads();
  if (p.paged()) out["page_size"] = p.page_size;
  return out;
}

AttentionProblem read_problem(const Node& n) {
  AttentionProblem p;
  p.dtype = n.named("dtype", parse_dtype, "dtype");
  p.batch = n.integer("batch");
  p.heads = n.integer("heads");
  p.seq_len = n.integer("seq_len");
  p.head_dim = n.integer("head_dim");
  p.causal = n.boolean("causal");
  // Absent for square self-attention (every report before they existed).
  if (n.has("kv_len")) p.kv_len = n.integer("kv_len");
  if (n.has("kv_heads")) p.kv_heads = n.integer("kv_heads");
  if (n.has("page_size")) p.page_size = n.integer("page_size");
  return p;
}

json identity_json(const RowIdentity& row) {
  json out = problem_json(row.problem);
  out["kernel"] = row.kernel;
  out["direction"] = to_string(row.direction);
  return out;
}

json to_json(const ResultRow& row) {
  json out = identity_json(row);
  if (row.kernel_revision) out["kernel_revision"] = *row.kernel_revision;
  out["tile"] = row.tile.tiled() ? json{{"br", row.tile.br}, {"bc", row.tile.bc}} : json(nullptr);
  out["compute_unit"] = to_string(row.compute_unit);
  out["status"] = to_string(row.status);
  out["reason"] = row.reason;
  if (row.model) {
    json breakdown = json::object();
    for (const TensorBytes& entry : row.model->traffic.breakdown) {
      breakdown[entry.tensor] = entry.bytes;
    }
    out["flops"] = {{"convention", to_string(row.model->flops.convention)}};
    out["traffic"] = {{"model", to_string(row.model->traffic.model)}, {"breakdown", breakdown}};
    if (row.model->traffic.model == TrafficModelKind::split_kv) {
      out["traffic"]["kv_splits"] = row.model->traffic.kv_splits;
    }
    if (const auto& l2 = row.model->l2_inputs) {
      out["traffic"]["l2_model"] = {
          {"l2_bytes", l2->l2_bytes}, {"l2_partitions", l2->l2_partitions},
          {"sm_count", l2->sm_count}, {"cc", to_string(l2->cc)},
          {"source", l2->source},     {"revision", l2->revision}};
      if (l2->loop_kept_bytes > 0) {
        out["traffic"]["l2_model"]["loop_kept_bytes"] = l2->loop_kept_bytes;
        out["traffic"]["l2_model"]["loop_kept_source"] = l2->loop_kept_source;
      }
    }
  }
  if (row.device) out["device"] = *row.device;
  if (row.timing) out["timing"] = timing_json(*row.timing);
  if (row.correctness) out["correctness"] = correctness_json(*row.correctness);
  if (row.claimed) out["claimed"] = {{"source", row.claimed->source}};
  if (row.profile) out["profile"] = profile_json(*row.profile);
  if (row.energy) out["energy"] = energy_json(*row.energy);
  write_figures(row, out);
  return out;
}

// build_type and cuda_archs where known: a peer script has neither.
json to_json(const ToolInfo& tool) {
  json out = {{"name", tool.name},
              {"version", tool.version},
              {"git_commit", tool.git_commit},
              {"git_dirty", tool.git_dirty}};
  if (!tool.build_type.empty()) out["build_type"] = tool.build_type;
  if (!tool.cuda_archs.empty()) out["cuda_archs"] = tool.cuda_archs;
  return out;
}

json to_json(const Provenance& provenance) {
  json out = {{"source", to_string(provenance.source)}, {"auditable", provenance.auditable},
              {"reasons", provenance.reasons},          {"created_utc", provenance.created_utc},
              {"command", provenance.command},          {"host", provenance.host}};
  if (!provenance.plugins.empty()) {
    json plugins = json::array();
    for (const PluginKernelRecord& plugin : provenance.plugins) {
      plugins.push_back({{"kernel", plugin.kernel},
                         {"version", plugin.version},
                         {"file", plugin.file},
                         {"sha256", plugin.sha256}});
    }
    out["plugins"] = std::move(plugins);
  }
  if (!provenance.environment.empty()) out["environment"] = provenance.environment;
  return out;
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
  p.reasons = provenance.strings("reasons");
  p.created_utc = provenance.string("created_utc");
  p.command = provenance.string("command");
  if (provenance.has("host")) p.host = provenance.string("host");
  if (provenance.has("plugins")) {
    const json& plugins = provenance.array("plugins");
    for (std::size_t i = 0; i < plugins.size(); ++i) {
      const Node plugin(plugins[i], fmt::format("{}[{}]", provenance.key_path("plugins"), i));
      p.plugins.push_back({plugin.string("kernel"), plugin.string("version"), plugin.string("file"),
                           plugin.string("sha256")});
    }
  }
  if (provenance.has("environment")) p.environment = read_environment(provenance, "environment");
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

// The ceiling's instruction roofs and shared-memory bandwidth, written only
// where a ceilings file gave them, so a report without them reads as before.
void write_instruction_roofs(const CeilingRecord& c, json& ceiling) {
  if (!c.instruction_TFLOPs.empty()) {
    json roofs = json::object();
    for (const auto& [figure, value] : c.instruction_TFLOPs) roofs[figure] = value;
    ceiling["instruction_TFLOPs"] = roofs;
  }
  if (c.shared_memory_GBps) ceiling["shared_memory_GBps"] = *c.shared_memory_GBps;
}

json to_json(const Report& report) {
  json devices = json::array();
  for (const DeviceRecord& d : report.devices) devices.push_back(to_json(d));
  json results = json::array();
  for (const ResultRow& row : report.results) results.push_back(to_json(row));
  const CeilingRecord& c = report.ceiling;
  json out{{"schema", report.schema},
           {"tool", to_json(report.tool)},
           {"provenance", to_json(report.provenance)},
           {"devices", devices},
           {"ceiling",
            {{"gpu", c.gpu},
             {"gpu_name", c.gpu_name},
             {"source", c.source},
             {"source_detail", c.source_detail},
             {"bandwidth_GBps", c.bandwidth_GBps},
             {"l2_bandwidth_GBps", optional_number(c.l2_bandwidth_GBps)},
             {"read_bandwidth_GBps", optional_number(c.read_bandwidth_GBps)},
             {"peak_TFLOPs", peaks_json(c.peak_TFLOPs)},
             {"matches_device", c.matches_device ? json(*c.matches_device) : json(nullptr)}}},
           {"results", results}};
  write_instruction_roofs(c, out["ceiling"]);
  return out;
}

Report report_from_json(const json& document) {
  const Node top(document, "");
  Report report;
  report.schema = top.string("schema");
  if (report.schema != report_schema) {
    throw InputError(
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
  report.ceiling.l2_bandwidth_GBps = ceiling.optional_number("l2_bandwidth_GBps");
  report.ceiling.read_bandwidth_GBps = ceiling.optional_number("read_bandwidth_GBps");
  report.ceiling.peak_TFLOPs = read_peaks(ceiling.object("peak_TFLOPs"));
  if (ceiling.has("instruction_TFLOPs")) {
    const Node roofs = ceiling.object("instruction_TFLOPs");
    for (const auto& entry : ceiling.get("instruction_TFLOPs").items()) {
      report.ceiling.instruction_TFLOPs[entry.key()] = roofs.number(entry.key());
    }
  }
  report.ceiling.shared_memory_GBps = ceiling.optional_number("shared_memory_GBps");
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
