#include "roofline/model/gpu_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/core/file_name_part.hpp"
#include "roofline/model/roofline_model.hpp"

namespace cfr {

namespace {

using nlohmann::json;

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

class RowReader {
 public:
  RowReader(const json& row, std::string_view origin, std::string gpu)
      : row_(row), origin_(origin), gpu_(std::move(gpu)) {}

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const {
    throw InputError(fmt::format("{}: gpu '{}': field '{}' {}", origin_, gpu_, field, problem));
  }

  const json& object(const json& parent, std::string_view key, std::string_view path) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(path, "is missing");
    if (!it->is_object()) fail(path, "must be an object");
    return *it;
  }

  std::string string(const json& parent, std::string_view key, std::string_view path) const {
    const auto it = parent.find(key);
    if (it == parent.end()) fail(path, "is missing");
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      fail(path, "must be a non-empty string");
    }
    return it->get<std::string>();
  }

  // {"value": number > 0, "source": "document"}; null value only when allowed.
  std::optional<SourcedFigure> figure(const json& parent, std::string_view key,
                                      std::string_view path, bool null_allowed) const {
    const json& entry = object(parent, key, path);
    const std::string value_path = fmt::format("{}.value", path);
    const auto value = entry.find("value");
    if (value == entry.end()) fail(value_path, "is missing");
    const std::string source = string(entry, "source", fmt::format("{}.source", path));
    if (value->is_null()) {
      if (!null_allowed) fail(value_path, "is null");
      return std::nullopt;
    }
    if (!value->is_number()) fail(value_path, "is not a number");
    const double number = value->get<double>();
    if (!std::isfinite(number) || number <= 0) fail(value_path, "must be a positive number");
    return SourcedFigure{number, source};
  }

  SourcedFigure required_figure(std::string_view key) const {
    return *figure(row_, key, key, false);
  }

  const json& row() const { return row_; }

 private:
  const json& row_;
  std::string_view origin_;
  std::string gpu_;
};

// Optional: {"value": "gh100", "source": "document"}. The name becomes an
// argument of ncu, so it is lowercase letters and digits.
void read_ncu_chip(const RowReader& reader, GpuSpec& gpu) {
  if (!reader.row().contains("ncu_chip")) return;
  const json& chip = reader.object(reader.row(), "ncu_chip", "ncu_chip");
  gpu.ncu_chip = reader.string(chip, "value", "ncu_chip.value");
  if (!std::all_of(gpu.ncu_chip.begin(), gpu.ncu_chip.end(),
                   [](unsigned char c) { return std::islower(c) || std::isdigit(c); })) {
    reader.fail("ncu_chip.value", "must be lowercase letters and digits, like \"gh100\"");
  }
  gpu.ncu_chip_source = reader.string(chip, "source", "ncu_chip.source");
}

GpuSpec parse_row(const json& row, std::size_t index, std::string_view origin) {
  if (!row.is_object()) {
    throw InputError(fmt::format("{}: gpus[{}] must be an object", origin, index));
  }
  std::string id = fmt::format("#{}", index);
  if (const auto it = row.find("id"); it != row.end() && it->is_string()) {
    id = it->get<std::string>();
  }
  const RowReader reader(row, origin, id);
  GpuSpec gpu;
  gpu.id = reader.string(row, "id", "id");
  // The id names files (import-historical writes NAME-ID.json) and is what
  // --gpu takes, next to the word `auto`.
  if (!is_file_name_part(gpu.id) || lowercase(gpu.id) == "auto") {
    reader.fail("id", "must be letters, digits, '_', '-' or '.' (not first), and not 'auto'");
  }
  gpu.name = reader.string(row, "name", "name");
  const auto names = row.find("match_names");
  if (names != row.end()) {
    if (!names->is_array()) reader.fail("match_names", "must be a list of strings");
    for (const json& name : *names) {
      if (!name.is_string()) reader.fail("match_names", "must be a list of strings");
      gpu.match_names.push_back(name.get<std::string>());
    }
  }
  const json& cc = reader.object(row, "compute_capability", "compute_capability");
  gpu.compute_capability = reader.string(cc, "value", "compute_capability.value");
  if (!parse_compute_capability(gpu.compute_capability)) {
    reader.fail("compute_capability.value", "must be a compute capability like \"8.0\"");
  }
  gpu.compute_capability_source = reader.string(cc, "source", "compute_capability.source");
  read_ncu_chip(reader, gpu);
  gpu.sm_count = reader.required_figure("sm_count");
  // A whole count an int holds; the L2 model keeps state per SM, so one past
  // any GPU's (today's have under 200) is refused rather than allocated.
  if (gpu.sm_count.value != std::floor(gpu.sm_count.value) || gpu.sm_count.value > max_sm_count) {
    reader.fail("sm_count.value", fmt::format("must be a whole number of SMs up to {}, found {:g}",
                                              max_sm_count, gpu.sm_count.value));
  }
  gpu.l2_bytes = reader.required_figure("l2_bytes");
  if (row.contains("l2_loop_kept_bytes")) {
    gpu.l2_loop_kept_bytes = reader.figure(row, "l2_loop_kept_bytes", "l2_loop_kept_bytes", false);
  }
  gpu.shared_memory_per_sm_bytes = reader.required_figure("shared_memory_per_sm_bytes");
  gpu.memory_bandwidth_GBps = reader.required_figure("memory_bandwidth_GBps");
  const json& peaks = reader.object(row, "peak_TFLOPs", "peak_TFLOPs");
  for (ComputeUnit unit : all_compute_units) {
    const std::string key(to_string(unit));
    const std::string path = fmt::format("peak_TFLOPs.{}.value", key);
    gpu.peak_TFLOPs[static_cast<std::size_t>(unit)] =
        reader.figure(peaks, key, fmt::format("peak_TFLOPs.{}", key), true);
    // Each figure is finite, but their ratio need not be: 1e300 TFLOP/s over
    // 1 GB/s has no ridge a chart or a regime could use.
    const auto ridge = gpu.ridge(unit);
    if (ridge && (!std::isfinite(*ridge) || !(*ridge > 0))) {
      reader.fail(path, fmt::format("{:g} over {:g} GB/s gives a ridge of {:g} FLOP/byte",
                                    *gpu.peak(unit), gpu.memory_bandwidth_GBps.value, *ridge));
    }
  }
  return gpu;
}

}  // namespace

ComputeCapability GpuSpec::cc() const {
  return parse_compute_capability(compute_capability).value_or(ComputeCapability{});
}

std::optional<double> GpuSpec::peak(ComputeUnit unit) const {
  const auto& figure = peak_TFLOPs[static_cast<std::size_t>(unit)];
  if (!figure) return std::nullopt;
  return figure->value;
}

std::optional<double> GpuSpec::ridge(ComputeUnit unit) const {
  const auto tflops = peak(unit);
  if (!tflops) return std::nullopt;
  return cfr::ridge(*tflops, memory_bandwidth_GBps.value);
}

const GpuSpec* GpuTable::find(std::string_view id) const {
  const std::string wanted = lowercase(id);
  for (const GpuSpec& gpu : gpus) {
    if (lowercase(gpu.id) == wanted) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> GpuTable::ids() const {
  std::vector<std::string> out;
  for (const GpuSpec& gpu : gpus) out.push_back(gpu.id);
  return out;
}

const GpuSpec* GpuTable::match_device(std::string_view device_name,
                                      std::string_view compute_capability) const {
  const std::string name = lowercase(device_name);
  for (const GpuSpec& gpu : gpus) {
    if (gpu.compute_capability != compute_capability) continue;
    for (const std::string& fragment : gpu.match_names) {
      if (name.find(lowercase(fragment)) != std::string::npos) return &gpu;
    }
  }
  return nullptr;
}

GpuTable parse_gpu_table(const json& document, std::string_view origin) {
  if (!document.is_object()) {
    throw InputError(fmt::format("{}: top level must be an object", origin));
  }
  const auto rows = document.find("gpus");
  if (rows == document.end() || !rows->is_array() || rows->empty()) {
    throw InputError(fmt::format("{}: key 'gpus' must be a non-empty list", origin));
  }
  GpuTable table;
  table.origin = std::string(origin);
  for (std::size_t i = 0; i < rows->size(); ++i) {
    GpuSpec gpu = parse_row((*rows)[i], i, origin);
    if (table.find(gpu.id) != nullptr) {
      throw InputError(fmt::format("{}: gpu '{}' appears twice", origin, gpu.id));
    }
    table.gpus.push_back(std::move(gpu));
  }
  return table;
}

nlohmann::json to_json(const GpuSpec& gpu) {
  json peaks = json::object();
  json ridges = json::object();
  json peak_sources = json::object();
  for (ComputeUnit unit : all_compute_units) {
    const std::string key(to_string(unit));
    const auto peak = gpu.peak(unit);
    peaks[key] = peak ? json(*peak) : json(nullptr);
    const auto ridge = gpu.ridge(unit);
    ridges[key] = ridge ? json(*ridge) : json(nullptr);
    const auto& figure = gpu.peak_TFLOPs[static_cast<std::size_t>(unit)];
    peak_sources[key] = figure ? json(figure->source) : json(nullptr);
  }
  // Where every figure came from; a ridge is computed from the two it divides.
  const json sources{{"compute_capability", gpu.compute_capability_source},
                     {"sm_count", gpu.sm_count.source},
                     {"l2_bytes", gpu.l2_bytes.source},
                     {"shared_memory_per_sm_bytes", gpu.shared_memory_per_sm_bytes.source},
                     {"bandwidth_GBps", gpu.memory_bandwidth_GBps.source},
                     {"peak_TFLOPs", peak_sources}};
  json out{{"id", gpu.id},
           {"name", gpu.name},
           {"compute_capability", gpu.compute_capability},
           {"sm_count", gpu.sm_count.value},
           {"l2_bytes", gpu.l2_bytes.value},
           {"shared_memory_per_sm_bytes", gpu.shared_memory_per_sm_bytes.value},
           {"bandwidth_GBps", gpu.memory_bandwidth_GBps.value},
           {"bandwidth_source", gpu.memory_bandwidth_GBps.source},
           {"peak_TFLOPs", peaks},
           {"ridge_FLOP_per_byte", ridges},
           {"sources", sources}};
  if (gpu.l2_loop_kept_bytes) {
    out["l2_loop_kept_bytes"] = gpu.l2_loop_kept_bytes->value;
    out["sources"]["l2_loop_kept_bytes"] = gpu.l2_loop_kept_bytes->source;
  }
  return out;
}

}  // namespace cfr
