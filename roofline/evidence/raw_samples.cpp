#include "roofline/evidence/raw_samples.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/report/auditability.hpp"
#include "roofline/report/json_reader.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_values.hpp"
#include "roofline/report/row_model.hpp"

namespace cfr::evidence {

namespace {

using nlohmann::json;

// The arithmetic paths a peer's kernel can name (library_gemm maps to the
// same units as tensor_for_dtype: one name is enough).
constexpr std::array<std::pair<std::string_view, ArithmeticPath>, 2> arithmetic_names{{
    {"tensor_for_dtype", ArithmeticPath::tensor_for_dtype},
    {"fp32_simt", ArithmeticPath::fp32_simt},
}};

std::optional<ArithmeticPath> parse_arithmetic(std::string_view text) {
  for (const auto& [name, path] : arithmetic_names) {
    if (text == name) return path;
  }
  return std::nullopt;
}

std::string_view arithmetic_name(ArithmeticPath arithmetic) {
  for (const auto& [name, path] : arithmetic_names) {
    if (path == arithmetic) return name;
  }
  return "?";
}

double not_negative(const Node& n, std::string_view key) {
  const double x = n.number(key);
  if (x < 0)
    throw InputError(fmt::format("{}: must not be negative, found {}", n.key_path(key), x));
  return x;
}

// CheckResult as measured: rel_l2_err over the finite elements (a tensor
// with NaN or Inf fails whatever its errors: passes reads all_finite first).
CheckedTensor read_checked_tensor(const Node& n) {
  CheckedTensor tensor;
  tensor.tensor = n.string("tensor");
  CheckResult& check = tensor.check;
  check.rel_l2_err = not_negative(n, "rel_l2_err");
  check.max_abs_err = not_negative(n, "max_abs_err");
  check.ref_max_abs = not_negative(n, "ref_max_abs");
  check.all_finite = n.boolean("all_finite");
  return tensor;
}

RawCheck read_check(const Node& n) {
  RawCheck check;
  check.reference = n.string("reference");
  const json& tensors = n.array("tensors");
  if (tensors.empty()) n.fail("tensors: no output tensor was checked");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check.tensors.push_back(
        read_checked_tensor(Node(tensors[i], fmt::format("{}[{}]", n.key_path("tensors"), i))));
  }
  return check;
}

template <typename T, typename Key>
bool contains(const std::vector<T>& list, const Key& key) {
  return std::any_of(list.begin(), list.end(), [&](const T& entry) { return key(entry); });
}

RawRow read_row(const Node& n, const RawSamples& raw) {
  RawRow row;
  row.kernel = n.string("kernel");
  if (!contains(raw.backends, [&](const RawBackend& b) { return b.kernel == row.kernel; })) {
    throw InputError(
        fmt::format("{}: '{}' is not one of backends", n.key_path("kernel"), row.kernel));
  }
  if (n.has("direction")) row.direction = n.named("direction", parse_direction, "direction");
  row.problem = read_problem(n.object("problem"));
  row.device = n.int32("device");
  if (!contains(raw.devices, [&](const DeviceRecord& d) { return d.index == row.device; })) {
    throw InputError(fmt::format("{}: {} is not one of devices", n.key_path("device"), row.device));
  }
  row.status = n.named("status", parse_row_status, "status");
  row.reason = n.string("reason");
  const bool ran = row.status == RowStatus::ok;
  if (!ran && row.reason.empty())
    n.fail(fmt::format("a {} row needs a reason", to_string(row.status)));
  for (std::string_view key : {"check", "timing"}) {
    if (!ran && n.has(key)) {
      throw InputError(
          fmt::format("{}: present, but the row is {}", n.key_path(key), to_string(row.status)));
    }
  }
  if (ran) row.check = read_check(n.object("check"));
  if (ran && n.has("timing")) row.timing = read_timing(n.object("timing"));
  return row;
}

RawProvenance read_raw_provenance(const Node& n) {
  RawProvenance p;
  p.created_utc = n.string("created_utc");
  p.command = n.string("command");
  p.host = n.string("host");
  const Node environment = n.object("environment");
  for (const auto& [name, version] : n.get("environment").items()) {
    p.environment[name] = environment.string(name);
    if (p.environment[name].empty()) environment.fail(fmt::format("{}: empty", name));
  }
  if (p.environment.empty()) environment.fail("names no software (python, torch, ...)");
  p.reasons = n.strings("reasons");
  p.finished = n.boolean("finished");
  return p;
}

RawBackend read_backend(const Node& n, const std::vector<RawBackend>& earlier) {
  RawBackend backend;
  backend.kernel = n.string("kernel");
  if (find_kernel(backend.kernel) != nullptr) {
    throw InputError(fmt::format(
        "{}: '{}' is a built-in kernel's name; a peer's kernel needs its own (torch_sdpa_flash)",
        n.key_path("kernel"), backend.kernel));
  }
  if (contains(earlier, [&](const RawBackend& b) { return b.kernel == backend.kernel; })) {
    throw InputError(fmt::format("{}: '{}' appears twice", n.key_path("kernel"), backend.kernel));
  }
  backend.arithmetic = n.named("arithmetic", parse_arithmetic, "arithmetic");
  return backend;
}

// Each entry of `key`, a list of objects, read by `read`.
template <typename Read>
void read_list(const Node& top, std::string_view key, Read read) {
  const json& list = top.array(key);
  for (std::size_t i = 0; i < list.size(); ++i) read(Node(list[i], fmt::format("{}[{}]", key, i)));
}

json check_json(const RawCheck& check) {
  json tensors = json::array();
  for (const CheckedTensor& t : check.tensors) {
    tensors.push_back({{"tensor", t.tensor},
                       {"rel_l2_err", t.check.rel_l2_err},
                       {"max_abs_err", t.check.max_abs_err},
                       {"ref_max_abs", t.check.ref_max_abs},
                       {"all_finite", t.check.all_finite}});
  }
  return {{"reference", check.reference}, {"tensors", tensors}};
}

json row_json(const RawRow& row) {
  json out = {{"kernel", row.kernel},
              {"problem", problem_json(row.problem)},
              {"device", row.device},
              {"status", to_string(row.status)},
              {"reason", row.reason}};
  // Written only where it is not the forward, so a forward row reads as
  // every file written before the key did.
  if (row.direction != Direction::forward) out["direction"] = to_string(row.direction);
  if (row.check) out["check"] = check_json(*row.check);
  if (row.timing) out["timing"] = timing_json(*row.timing);
  return out;
}

// A peer's kernel as model_row takes it: every dtype, the row's head dim, any
// GPU, untiled, the compulsory bytes of its direction. A forward takes any
// shape (one its framework refuses is a skipped raw row); a backward only
// self-attention with as many keys as queries and a contiguous cache, GQA
// included: the only backward the traffic models describe, as fa2_bwd.
// `head_dim` must outlive the description.
KernelDescription peer_kernel(const RawBackend& backend, Direction direction,
                              const std::array<int, 1>& head_dim) {
  const bool forward = direction == Direction::forward;
  return {.name = backend.kernel,
          .direction = direction,
          .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
          .head_dims = head_dim,
          .arithmetic = backend.arithmetic,
          .traffic = TrafficModelKind::compulsory,
          .summary = "a peer's kernel (docs/peers.md)",
          .shapes = {.kv_len = forward,
                     .kv_heads = true,
                     .paged = forward,
                     .served_shapes_reason = forward ? ""
                                                     : "the backward models describe as many "
                                                       "keys as queries and a contiguous cache "
                                                       "only"}};
}

ResultRow report_row(const RawSamples& raw, const RawRow& measured, const CeilingRecord& ceiling,
                     FlopConvention convention) {
  const RawBackend& backend =
      *std::find_if(raw.backends.begin(), raw.backends.end(),
                    [&](const RawBackend& b) { return b.kernel == measured.kernel; });
  const DeviceRecord& device =
      *std::find_if(raw.devices.begin(), raw.devices.end(),
                    [&](const DeviceRecord& d) { return d.index == measured.device; });
  // A head dim beyond an int is refused by model_row's limits before it is read.
  const std::array<int, 1> head_dim{static_cast<int>(
      std::min<std::int64_t>(measured.problem.head_dim, std::numeric_limits<int>::max()))};
  ResultRow row = model_row(peer_kernel(backend, measured.direction, head_dim), measured.problem,
                            ceiling, convention, parse_compute_capability(device.cc));
  row.device = measured.device;
  if (row.status != RowStatus::ok) return row;  // the sweep would not have measured it
  row.status = measured.status;
  row.reason = measured.reason;
  if (row.status != RowStatus::ok) return row;
  row.correctness = correctness_record(measured.check->reference, measured.problem.dtype,
                                       measured.check->tensors);
  if (auto failure = correctness_failure(*row.correctness)) {
    row.status = RowStatus::failed;
    row.reason = std::move(*failure);
    return row;
  }
  // A peer's process is not ours: whether a profiler was attached there is
  // not known here, so its samples are judged without naming one.
  record_timing(row, measured.timing, ceiling, std::nullopt);
  return row;
}

}  // namespace

RawSamples raw_samples_from_json(const json& document) {
  const Node top(document, "");
  const std::string schema = top.string("schema");
  if (schema != raw_samples_schema) {
    throw InputError(fmt::format("schema: expected '{}', found '{}'", raw_samples_schema, schema));
  }
  RawSamples raw;
  raw.tool = read_tool(top.object("tool"));
  raw.provenance = read_raw_provenance(top.object("provenance"));
  read_list(top, "devices", [&](const Node& n) {
    raw.devices.push_back(read_device(n));
    if (std::count_if(raw.devices.begin(), raw.devices.end(), [&](const DeviceRecord& d) {
          return d.index == raw.devices.back().index;
        }) > 1) {
      n.fail(fmt::format("device {} appears twice", raw.devices.back().index));
    }
  });
  read_list(top, "backends",
            [&](const Node& n) { raw.backends.push_back(read_backend(n, raw.backends)); });
  if (raw.backends.empty()) top.fail("backends: the document names no kernel");
  read_list(top, "results", [&](const Node& n) { raw.rows.push_back(read_row(n, raw)); });
  return raw;
}

json to_json(const RawSamples& raw) {
  json devices = json::array();
  for (const DeviceRecord& d : raw.devices) devices.push_back(to_json(d));
  json backends = json::array();
  for (const RawBackend& b : raw.backends) {
    backends.push_back({{"kernel", b.kernel}, {"arithmetic", arithmetic_name(b.arithmetic)}});
  }
  json results = json::array();
  for (const RawRow& row : raw.rows) results.push_back(row_json(row));
  const RawProvenance& p = raw.provenance;
  return {{"schema", raw_samples_schema},
          {"tool", to_json(raw.tool)},
          {"provenance",
           {{"created_utc", p.created_utc},
            {"command", p.command},
            {"host", p.host},
            {"environment", p.environment},
            {"reasons", p.reasons},
            {"finished", p.finished}}},
          {"devices", devices},
          {"backends", backends},
          {"results", results}};
}

Report samples_report(const RawSamples& raw, const CeilingRecord& ceiling,
                      FlopConvention convention, const std::vector<std::string>& ceiling_reasons) {
  Report report;
  report.tool = raw.tool;
  Provenance& p = report.provenance;
  p.source = ProvenanceSource::measured;
  p.created_utc = raw.provenance.created_utc;
  p.command = raw.provenance.command;
  p.host = raw.provenance.host;
  p.environment = raw.provenance.environment;
  report.devices = raw.devices;
  report.ceiling = ceiling;
  for (const RawRow& row : raw.rows) {
    report.results.push_back(report_row(raw, row, ceiling, convention));
  }
  p.reasons = raw.provenance.reasons;
  if (!raw.provenance.finished)
    p.reasons.push_back("the measurement did not finish: not every configuration ran");
  p.reasons.insert(p.reasons.end(), ceiling_reasons.begin(), ceiling_reasons.end());
  const std::vector<std::string> failures = auditability_failures(report);
  p.auditable = failures.empty() && raw.provenance.finished;
  p.reasons.insert(p.reasons.end(), failures.begin(), failures.end());
  check_report_values(report);
  return report;
}

}  // namespace cfr::evidence
