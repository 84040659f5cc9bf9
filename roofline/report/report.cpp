#include "roofline/report/report.hpp"

#include <fmt/format.h>

namespace cfr {

std::string_view to_string(ProvenanceSource source) {
  switch (source) {
    case ProvenanceSource::model: return "model";
    case ProvenanceSource::measured: return "measured";
    case ProvenanceSource::historical: return "historical";
  }
  return "?";
}

std::string_view to_string(MemoryRoof roof) {
  switch (roof) {
    case MemoryRoof::dram: return "dram";
    case MemoryRoof::dram_read: return "dram_read";
  }
  return "?";
}

std::optional<MemoryRoof> parse_memory_roof(std::string_view text) {
  for (MemoryRoof roof : {MemoryRoof::dram, MemoryRoof::dram_read}) {
    if (text == to_string(roof)) return roof;
  }
  return std::nullopt;
}

std::string_view to_string(RowStatus status) {
  switch (status) {
    case RowStatus::ok: return "ok";
    case RowStatus::skipped: return "skipped";
    case RowStatus::failed: return "failed";
  }
  return "?";
}

std::optional<RowStatus> parse_row_status(std::string_view text) {
  for (RowStatus status : {RowStatus::ok, RowStatus::skipped, RowStatus::failed}) {
    if (text == to_string(status)) return status;
  }
  return std::nullopt;
}

std::optional<double> ModelFigures::bytes_of(TrafficModelKind model) const {
  for (const ModelBytes& entry : bytes_by_model) {
    if (entry.model == model) return entry.bytes;
  }
  return std::nullopt;
}

double ModelFigures::dram_bytes() const {
  if (dram_model == traffic.model) return traffic.bytes;
  return bytes_of(dram_model).value_or(0.0);
}

void ModelFigures::set_bytes_of(TrafficModelKind model, double bytes) {
  for (ModelBytes& entry : bytes_by_model) {
    if (entry.model == model) {
      entry.bytes = bytes;
      return;
    }
  }
  bytes_by_model.push_back({model, bytes});
}

std::string row_label(const RowIdentity& row) {
  const AttentionProblem& p = row.problem;
  if (p.square()) {
    return fmt::format("{} {} {} B={} H={} N={} d={}{}", row.kernel, to_string(row.direction),
                       to_string(p.dtype), p.batch, p.heads, p.seq_len, p.head_dim,
                       p.causal ? " causal" : "");
  }
  return fmt::format(
      "{} {} {} B={} H={} Hkv={} Nq={} Nk={} d={}{}{}", row.kernel, to_string(row.direction),
      to_string(p.dtype), p.batch, p.heads, p.key_heads(), p.seq_len, p.keys(), p.head_dim,
      p.paged() ? fmt::format(" page={}", p.page_size) : "", p.causal ? " causal" : "");
}

std::string row_location(std::size_t index, const RowIdentity& row) {
  return fmt::format("results[{}] ({})", index, row_label(row));
}

const DeviceRecord* device_of(const Report& report, const ResultRow& row) {
  if (!row.device) return nullptr;
  for (const DeviceRecord& device : report.devices) {
    if (device.index == *row.device) return &device;
  }
  return nullptr;
}

}  // namespace cfr
