#include "roofline/report/figures.hpp"

#include <array>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

// A figure stored in a double of the row, reached by `field` (a generic
// lambda, so one accessor serves the const reader and the writer).
template <auto field>
FigureValue read_number(const ResultRow& row) {
  return static_cast<double>(field(row));
}
template <auto field>
bool store_number(ResultRow& row, const FigureValue& value) {
  field(row) = std::get<double>(value);
  return true;
}
template <auto field>
constexpr Figure number(Figure figure) {
  figure.read = read_number<field>;
  figure.store = store_number<field>;
  return figure;
}

// A measured figure kept optional in a part of the row that `holder` reaches
// (the profile's or the energy's derived figures): absent where what it is
// derived from is.
template <auto holder, auto field>
FigureValue read_optional(const ResultRow& row) {
  const auto& slot = field(holder(row));
  return slot ? FigureValue(*slot) : FigureValue();
}
template <auto holder, auto field>
bool store_optional(ResultRow& row, const FigureValue& value) {
  auto& slot = field(holder(row));
  slot = std::get<typename std::remove_reference_t<decltype(slot)>::value_type>(value);
  return true;
}
template <auto holder, auto field>
constexpr Figure optional_measured(Figure figure, FigureGroup group) {
  figure.read = read_optional<holder, field>;
  figure.store = store_optional<holder, field>;
  figure.source = FigureSource::measured;
  figure.group = group;
  figure.optional_on_read = true;
  return figure;
}

// A profile figure: an optional number or word of ProfileDerived, absent
// where a counter or the L2 bandwidth is.
template <auto field>
constexpr Figure derived(Figure figure) {
  return optional_measured < [](auto& row) -> auto& {
    return row.profile->derived;
  }
  , field > (figure, FigureGroup::profile);
}

// An energy figure: an optional number of EnergyDerived, absent where its
// readings cannot give it.
template <auto field>
constexpr Figure energy(Figure figure) {
  return optional_measured < [](auto& row) -> auto& {
    return row.energy->derived;
  }
  , field > (figure, FigureGroup::energy);
}

template <TrafficModelKind kind>
FigureValue read_model_bytes(const ResultRow& row) {
  const auto bytes = row.model->bytes_of(kind);
  return bytes ? FigureValue(*bytes) : FigureValue();
}
template <TrafficModelKind kind>
bool store_model_bytes(ResultRow& row, const FigureValue& value) {
  row.model->set_bytes_of(kind, std::get<double>(value));
  return true;
}
template <TrafficModelKind kind>
constexpr Figure model_bytes(Figure figure) {
  figure.read = read_model_bytes<kind>;
  figure.store = store_model_bytes<kind>;
  figure.unit = "B";
  figure.source = FigureSource::model;
  figure.group = FigureGroup::model;
  figure.display = FigureDisplay::giga;
  figure.precision = 3;
  figure.optional_on_read = true;  // since traffic.by_model; absent where the model does not apply
  return figure;
}

FigureValue read_counted_flops(const ResultRow& row) {
  return row.model->flops.counted();
}

FigureValue read_regime(const ResultRow& row) {
  return std::string(to_string(row.model->roofline->regime));
}
bool store_regime(ResultRow& row, const FigureValue& value) {
  const auto regime = parse_regime(std::get<std::string>(value));
  if (regime) row.model->roofline->regime = *regime;
  return regime.has_value();
}

template <auto bound>
FigureValue read_interval_bytes(const ResultRow& row) {
  const auto& interval = row.model->dram_interval;
  return interval ? FigureValue(static_cast<double>(bound(*interval))) : FigureValue();
}
template <auto bound>
bool store_interval_bytes(ResultRow& row, const FigureValue& value) {
  auto& interval = row.model->dram_interval;
  if (!interval) interval.emplace();
  bound(*interval) = std::get<double>(value);
  return true;
}
template <auto bound>
constexpr Figure interval_bytes(Figure figure) {
  figure.read = read_interval_bytes<bound>;
  figure.store = store_interval_bytes<bound>;
  figure.unit = "B";
  figure.source = FigureSource::model;
  figure.group = FigureGroup::model;
  figure.display = FigureDisplay::giga;
  figure.precision = 3;
  figure.optional_on_read = true;  // since issue 23; absent where the L2-aware model is
  return figure;
}

FigureValue read_interval_regime(const ResultRow& row) {
  const auto& verdict = row.model->interval_regime;
  return verdict ? FigureValue(std::string(to_string(*verdict))) : FigureValue();
}
bool store_interval_regime(ResultRow& row, const FigureValue& value) {
  const auto verdict = parse_interval_regime(std::get<std::string>(value));
  if (verdict) row.model->interval_regime = *verdict;
  return verdict.has_value();
}

// A view of profile.launches (audit checks the record itself).
FigureValue read_launch_spread(const ResultRow& row) {
  if (!row.profile || !row.profile->launches) return {};
  const auto spread = launch_spread(*row.profile->launches);
  return spread ? FigureValue(*spread) : FigureValue();
}

// The regime a reader should believe: the counters' where the row was
// profiled (its measured DRAM AI), else the model's interval's, else the
// point's (a row the L2-aware model does not describe).
FigureValue read_verdict(const ResultRow& row) {
  if (row.profile && row.profile->collected() && row.profile->derived.dram.regime) {
    return *row.profile->derived.dram.regime;
  }
  if (row.model->interval_regime) return std::string(to_string(*row.model->interval_regime));
  return read_regime(row);
}

FigureValue read_dram_model(const ResultRow& row) {
  return std::string(to_string(row.model->dram_model));
}
bool store_dram_model(ResultRow& row, const FigureValue& value) {
  const auto model = parse_traffic_model(std::get<std::string>(value));
  if (model) row.model->dram_model = *model;
  return model.has_value();
}

FigureValue read_memory_roof(const ResultRow& row) {
  const auto& roof = row.model->memory_roof;
  return roof ? FigureValue(std::string(to_string(*roof))) : FigureValue();
}
bool store_memory_roof(ResultRow& row, const FigureValue& value) {
  const auto roof = parse_memory_roof(std::get<std::string>(value));
  if (roof) row.model->memory_roof = *roof;
  return roof.has_value();
}

// The instruction roof (instruction_roof.hpp): absent where the kernel names
// no instruction or the ceiling has no figure for it.
FigureValue read_instruction_figure(const ResultRow& row) {
  const auto& roof = row.model->instruction_roof;
  return roof ? FigureValue(roof->figure) : FigureValue();
}
bool store_instruction_figure(ResultRow& row, const FigureValue& value) {
  row.model->instruction_roof.emplace().figure = std::get<std::string>(value);
  return true;
}
FigureValue read_instruction_TFLOPs(const ResultRow& row) {
  const auto& roof = row.model->instruction_roof;
  return roof ? FigureValue(roof->TFLOPs) : FigureValue();
}
bool store_instruction_TFLOPs(ResultRow& row, const FigureValue& value) {
  if (!row.model->instruction_roof) row.model->instruction_roof.emplace();
  row.model->instruction_roof->TFLOPs = std::get<double>(value);
  return true;
}

bool judged_on_read_roof(const ResultRow& row) {
  return row.model && row.model->memory_roof == MemoryRoof::dram_read;
}

FigureValue read_claimed_regime(const ResultRow& row) {
  return row.claimed->regime;
}
bool store_claimed_regime(ResultRow& row, const FigureValue& value) {
  row.claimed->regime = std::get<std::string>(value);
  return true;
}

// Laid out by hand: clang-format 14 breaks a lambda in a template argument
// across lines and lines.
// clang-format off
constexpr auto figures = std::to_array<Figure>({
    // ---- model: attention_flops, estimate_traffic, analyze_roofline (docs/model.md)
    {.tag = "model/flops", .unit = "FLOP", .label = "GFLOP",
     .description = "matmul FLOPs counted in the report's causal convention",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 1,
     .column_sets = ColumnSet::wide | ColumnSet::compact_model, .compact_part = CompactPart::size,
     .read = read_counted_flops},
    number<[](auto& r) -> auto& { return r.model->flops.dense; }>(
    {.tag = "model/flops/dense", .json = "flops.dense", .unit = "FLOP", .label = "dense GFLOP",
     .description = "matmul FLOPs as if unmasked: 4·B·H·N²·d forward, 2.5 times that backward",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 1}),
    number<[](auto& r) -> auto& { return r.model->flops.exact; }>(
    {.tag = "model/flops/exact", .json = "flops.exact", .unit = "FLOP", .label = "exact GFLOP",
     .description = "matmul FLOPs over the unmasked (query, key) pairs",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 1}),
    number<[](auto& r) -> auto& { return r.model->flops.half; }>(
    {.tag = "model/flops/half", .json = "flops.half", .unit = "FLOP", .label = "half GFLOP",
     .description = "dense matmul FLOPs / 2 when causal (the FlashAttention papers' count)",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 1}),
    number<[](auto& r) -> auto& { return r.model->flops.softmax; }>(
    {.tag = "model/flops/softmax", .json = "flops.softmax", .unit = "FLOP",
     .label = "softmax GFLOP",
     .description = "softmax FLOPs, 5 per counted pair; not in AI or the roof",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 1, .optional_on_read = true}),
    number<[](auto& r) -> auto& { return r.model->traffic.bytes; }>(
    {.tag = "model/bytes", .json = "traffic.bytes", .unit = "B", .label = "model GB",
     .description = "bytes of the kernel's own traffic model (traffic.model)",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 3,
     .column_sets = ColumnSet::wide | ColumnSet::compact_model, .compact_part = CompactPart::size}),
    number<[](auto& r) -> auto& { return r.model->traffic.compulsory_bytes; }>(
    {.tag = "model/compulsory_bytes", .json = "traffic.compulsory_bytes", .unit = "B",
     .label = "floor GB",
     .description = "the compulsory floor of the direction: every input read, every output "
                    "written once",
     .source = FigureSource::model, .group = FigureGroup::model,
     .display = FigureDisplay::giga, .precision = 3}),
    model_bytes<TrafficModelKind::compulsory>(
    {.tag = "model/bytes/compulsory", .json = "traffic.by_model.compulsory",
     .label = "compulsory GB",
     .description = "bytes of the compulsory model (docs/model.md)"}),
    model_bytes<TrafficModelKind::materialized>(
    {.tag = "model/bytes/materialized", .json = "traffic.by_model.materialized",
     .label = "materialized GB",
     .description = "bytes of the materialized model: S and P written and read back"}),
    model_bytes<TrafficModelKind::kv_reload>(
    {.tag = "model/bytes/kv_reload", .json = "traffic.by_model.kv_reload",
     .label = "kv_reload GB",
     .description = "bytes of the kv_reload model: K and V loaded once per Q block"}),
    model_bytes<TrafficModelKind::fa1_backward>(
    {.tag = "model/bytes/fa1_backward", .json = "traffic.by_model.fa1_backward",
     .label = "fa1_backward GB",
     .description = "bytes of the fa1_backward model: the three passes of the FA1 backward"}),
    model_bytes<TrafficModelKind::fa2_backward>(
    {.tag = "model/bytes/fa2_backward", .json = "traffic.by_model.fa2_backward",
     .label = "fa2_backward GB",
     .description = "bytes of the fa2_backward model: the FA2 backward's launches, its dQ atomics "
                    "an fp32 read-modify-write per K/V block"}),
    model_bytes<TrafficModelKind::l2_aware>(
    {.tag = "model/bytes/l2_aware", .json = "traffic.by_model.l2_aware",
     .label = "L2-aware GB",
     .description = "DRAM bytes of the L2-aware model: the kernel's launches through an LRU L2"}),
    model_bytes<TrafficModelKind::plugin>(
    {.tag = "model/bytes/plugin", .json = "traffic.by_model.plugin",
     .label = "plugin GB",
     .description = "the kernel's own HBM byte count, from its plugin's hbm_bytes callback"}),
    interval_bytes<[](auto& i) -> auto& { return i.low; }>(
    {.tag = "model/bytes/l2_aware_low", .json = "traffic.l2_interval.low",
     .label = "L2-aware low GB",
     .description = "the L2-aware model's low bound: a head's CTAs in lock-step, one copy of a "
                    "line in the whole L2, evicted writes (docs/model.md, \"The interval\")"}),
    interval_bytes<[](auto& i) -> auto& { return i.high; }>(
    {.tag = "model/bytes/l2_aware_high", .json = "traffic.l2_interval.high",
     .label = "L2-aware high GB",
     .description = "the L2-aware model's high bound: resident CTAs drifted apart, every write "
                    "reaching DRAM"}),
    {.tag = "model/dram_model", .json = "traffic.dram_model", .label = "DRAM model",
     .description = "the traffic model whose bytes AI, the roof, regime, % roof and GB/s use",
     .source = FigureSource::model, .group = FigureGroup::model,
     .column_sets = ColumnSet::wide | ColumnSet::compact, .compact_part = CompactPart::bytes,
     .optional_on_read = true,
     .read = read_dram_model, .store = store_dram_model},
    {.tag = "ceiling/memory_roof", .json = "memory_roof", .label = "memory roof",
     .description = "the ceiling's bandwidth that the row's roof, ridge, % BW and ncu DRAM roof "
                    "use: dram (a copy's, or the datasheet's) or dram_read (the read stream's, "
                    "for a split_kv kernel where the ceiling has one); `table` shows it beside a "
                    "dram_read row",
     .source = FigureSource::ceiling, .group = FigureGroup::model,
     .column_sets = ColumnSet::wide | ColumnSet::compact, .compact_part = CompactPart::roofline,
     .optional_on_read = true, .shown_where = judged_on_read_roof,
     .read = read_memory_roof, .store = store_memory_roof},
    number<[](auto& r) -> auto& { return r.model->ai; }>(
    {.tag = "model/ai", .json = "ai", .unit = "FLOP/B", .label = "AI",
     .description = "arithmetic intensity, counted FLOPs / the DRAM model's bytes",
     .source = FigureSource::model, .group = FigureGroup::model, .precision = 1,

     .column_sets = ColumnSet::wide | ColumnSet::compact,
     .compact_part = CompactPart::roofline, .optional_on_read = true}),
    {.tag = "model/ai_low", .json = "ai_low", .unit = "FLOP/B", .label = "AI low",
     .description = "counted FLOPs / the L2-aware high bytes",
     .source = FigureSource::model, .group = FigureGroup::model, .precision = 1,
     .column_sets = ColumnSet::wide, .optional_on_read = true,
     .read = read_optional<[](auto& r) -> auto& { return *r.model; },
                           [](auto& m) -> auto& { return m.ai_low; }>,
     .store = store_optional<[](auto& r) -> auto& { return *r.model; },
                             [](auto& m) -> auto& { return m.ai_low; }>},
    {.tag = "model/ai_high", .json = "ai_high", .unit = "FLOP/B", .label = "AI high",
     .description = "counted FLOPs / the L2-aware low bytes",
     .source = FigureSource::model, .group = FigureGroup::model, .precision = 1,
     .column_sets = ColumnSet::wide, .optional_on_read = true,
     .read = read_optional<[](auto& r) -> auto& { return *r.model; },
                           [](auto& m) -> auto& { return m.ai_high; }>,
     .store = store_optional<[](auto& r) -> auto& { return *r.model; },
                             [](auto& m) -> auto& { return m.ai_high; }>},
    number<[](auto& r) -> auto& { return r.model->roofline->ridge; }>(
    {.tag = "ceiling/ridge", .json = "ridge", .unit = "FLOP/B", .label = "ridge",
     .description = "AI where the row's compute-unit peak meets the bandwidth slope",
     .source = FigureSource::ceiling, .group = FigureGroup::roofline, .precision = 1,

     .column_sets = ColumnSet::wide | ColumnSet::compact_model,
     .compact_part = CompactPart::roofline}),
    number<[](auto& r) -> auto& { return r.model->roofline->ridge_distance; }>(
    {.tag = "model/ridge_distance", .json = "ridge_distance", .unit = "ratio",
     .label = "ridge / AI", .description = "how far left of the ridge the row sits (above 1: left)",
     .source = FigureSource::model, .group = FigureGroup::roofline, .precision = 2}),
    {.tag = "model/regime", .json = "regime", .label = "point regime",
     .description = "memory-bound when AI < ridge, else compute-bound (the model's point)",
     .source = FigureSource::model, .group = FigureGroup::roofline,
     .column_sets = ColumnSet::wide, .read = read_regime, .store = store_regime},
    {.tag = "model/interval_regime", .json = "interval_regime", .label = "interval regime",
     .description = "the regime at both ends of [AI low, AI high], or uncertain when the "
                    "interval straddles the ridge",
     .source = FigureSource::model, .group = FigureGroup::roofline, .optional_on_read = true,
     .read = read_interval_regime, .store = store_interval_regime},
    {.tag = "model/verdict", .label = "regime",
     .description = "the regime to believe: the counters' (regime at the ncu DRAM AI) on a "
                    "profiled row, else the interval regime where the L2-aware model applies, "
                    "else the point regime",
     .source = FigureSource::model, .group = FigureGroup::roofline,
     .column_sets = ColumnSet::wide | ColumnSet::compact, .compact_part = CompactPart::roofline,
     .read = read_verdict},
    number<[](auto& r) -> auto& { return r.model->roofline->roof_TFLOPs; }>(
    {.tag = "model/roof_TFLOPs", .json = "roof_TFLOPs", .unit = "TFLOPS", .label = "roof TFLOPS",
     .description = "the roofline bound at the row's AI: min(peak, bandwidth x AI)",
     .source = FigureSource::model, .group = FigureGroup::roofline, .precision = 1,

     .column_sets = ColumnSet::wide | ColumnSet::compact_model,
     .compact_part = CompactPart::roofline}),
    number<[](auto& r) -> auto& { return r.model->roofline->roof_time_ms; }>(
    {.tag = "model/roof_time_ms", .json = "roof_time_ms", .unit = "ms", .label = "roof ms",
     .description = "the least time the roof allows: max(FLOPs / peak, bytes / bandwidth)",
     .source = FigureSource::model, .group = FigureGroup::roofline, .precision = 3,

     .column_sets = ColumnSet::wide | ColumnSet::compact_model,
     .compact_part = CompactPart::roofline}),
    {.tag = "ceiling/instruction", .json = "instruction_roof.figure", .label = "instruction",
     .description = "the `ceilings` figure of the instruction the kernel's matmuls issue "
                    "(mma.sync, wgmma, FFMA, cuBLAS), with --ceiling measured|FILE",
     .source = FigureSource::ceiling, .group = FigureGroup::roofline,
     .column_sets = ColumnSet::why, .optional_on_read = true,
     .read = read_instruction_figure, .store = store_instruction_figure},
    {.tag = "ceiling/instruction_roof_TFLOPs", .json = "instruction_roof.TFLOPs",
     .unit = "TFLOPS", .label = "instr roof TFLOPS",
     .description = "the roofline at the instruction's measured peak: min(peak, bandwidth x AI)",
     .source = FigureSource::ceiling, .group = FigureGroup::roofline, .precision = 1,
     .column_sets = ColumnSet::why, .optional_on_read = true,
     .read = read_instruction_TFLOPs, .store = store_instruction_TFLOPs},

    // ---- measured: the summary of the raw samples (summarize)
    number<[](auto& r) -> auto& { return r.timing->summary.median; }>(
    {.tag = "measured/median_ms", .json = "timing.median_ms", .unit = "ms", .label = "median ms",
     .description = "median of the raw samples, CUDA events around one launch each",
     .source = FigureSource::measured, .group = FigureGroup::timing, .precision = 3,

     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::time}),
    number<[](auto& r) -> auto& { return r.timing->summary.min; }>(
    {.tag = "measured/min_ms", .json = "timing.min_ms", .unit = "ms", .label = "min ms",
     .description = "fastest sample", .source = FigureSource::measured,
     .group = FigureGroup::timing, .precision = 3}),
    number<[](auto& r) -> auto& { return r.timing->summary.max; }>(
    {.tag = "measured/max_ms", .json = "timing.max_ms", .unit = "ms", .label = "max ms",
     .description = "slowest sample", .source = FigureSource::measured,
     .group = FigureGroup::timing, .precision = 3}),
    number<[](auto& r) -> auto& { return r.timing->summary.mean; }>(
    {.tag = "measured/mean_ms", .json = "timing.mean_ms", .unit = "ms", .label = "mean ms",
     .description = "mean of the samples", .source = FigureSource::measured,
     .group = FigureGroup::timing, .precision = 3}),
    number<[](auto& r) -> auto& { return r.timing->summary.stdev; }>(
    {.tag = "measured/stdev_ms", .json = "timing.stdev_ms", .unit = "ms", .label = "stdev ms",
     .description = "sample standard deviation (n - 1)", .source = FigureSource::measured,
     .group = FigureGroup::timing, .precision = 4}),
    number<[](auto& r) -> auto& { return r.timing->summary.q1; }>(
    {.tag = "measured/q1_ms", .json = "timing.q1_ms", .unit = "ms", .label = "q1 ms",
     .description = "first quartile (linear interpolation, numpy's default)",
     .source = FigureSource::measured, .group = FigureGroup::timing, .precision = 3}),
    number<[](auto& r) -> auto& { return r.timing->summary.q3; }>(
    {.tag = "measured/q3_ms", .json = "timing.q3_ms", .unit = "ms", .label = "q3 ms",
     .description = "third quartile", .source = FigureSource::measured,
     .group = FigureGroup::timing, .precision = 3}),

    // ---- achieved: model counts over the measured median (achieved_figures)
    number<[](auto& r) -> auto& { return r.achieved->TFLOPs; }>(
    {.tag = "achieved/TFLOPs", .json = "achieved.TFLOPs", .unit = "TFLOPS", .label = "TFLOPS",
     .description = "counted FLOPs / median time", .source = FigureSource::derived,
     .group = FigureGroup::achieved, .precision = 2,
     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::speed}),
    number<[](auto& r) -> auto& { return r.achieved->bandwidth_GBps; }>(
    {.tag = "achieved/bandwidth_GBps", .json = "achieved.bandwidth_GBps", .unit = "GB/s",
     .label = "GB/s", .description = "the DRAM model's bytes / median time",
     .source = FigureSource::derived, .group = FigureGroup::achieved, .precision = 0,
     .column_sets = ColumnSet::wide}),
    number<[](auto& r) -> auto& { return r.achieved->bandwidth_utilization; }>(
    {.tag = "achieved/bandwidth_utilization", .json = "achieved.bandwidth_utilization",
     .unit = "fraction", .label = "% BW",
     .description = "GB/s / the ceiling's bandwidth; above 100%, the model charges L2 hits to "
                    "DRAM",
     .source = FigureSource::derived, .group = FigureGroup::achieved,
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::wide}),
    number<[](auto& r) -> auto& { return r.achieved->fraction_of_roof; }>(
    {.tag = "achieved/fraction_of_roof", .json = "achieved.fraction_of_roof",
     .unit = "fraction", .label = "% roof", .description = "TFLOPS / roof TFLOPS",
     .source = FigureSource::derived, .group = FigureGroup::achieved,
     .display = FigureDisplay::percent, .precision = 1,
     .column_sets = ColumnSet::wide | ColumnSet::compact_measured,
     .compact_part = CompactPart::speed}),

    {.tag = "achieved/fraction_of_instruction_roof",
     .json = "achieved.fraction_of_instruction_roof", .unit = "fraction",
     .label = "% instr roof", .description = "TFLOPS / the instruction's roof TFLOPS",
     .source = FigureSource::derived, .group = FigureGroup::achieved,
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why,
     .optional_on_read = true,
     .read = read_optional<[](auto& r) -> auto& { return *r.achieved; },
                           [](auto& a) -> auto& { return a.fraction_of_instruction_roof; }>,
     .store = store_optional<[](auto& r) -> auto& { return *r.achieved; },
                             [](auto& a) -> auto& { return a.fraction_of_instruction_roof; }>},

    // ---- profile: Nsight Compute's counters against the model (profile_figures)
    derived<[](auto& d) -> auto& { return d.dram.bytes; }>(
    {.tag = "profile/dram_bytes", .json = "profile.levels.dram.bytes", .unit = "B",
     .label = "ncu DRAM GB",
     .description = "DRAM bytes measured: dram__bytes_read.sum + dram__bytes_write.sum",
     .display = FigureDisplay::giga, .precision = 3}),
    derived<[](auto& d) -> auto& { return d.l2.bytes; }>(
    {.tag = "profile/l2_bytes", .json = "profile.levels.l2.bytes", .unit = "B",
     .label = "ncu L2 GB", .description = "L2 bytes measured: lts__t_bytes.sum",
     .display = FigureDisplay::giga, .precision = 3}),
    derived<[](auto& d) -> auto& { return d.dram.ai; }>(
    {.tag = "profile/ai_dram", .json = "profile.levels.dram.ai", .unit = "FLOP/B",
     .label = "AI DRAM", .description = "counted FLOPs / measured DRAM bytes", .precision = 1}),
    derived<[](auto& d) -> auto& { return d.l2.ai; }>(
    {.tag = "profile/ai_l2", .json = "profile.levels.l2.ai", .unit = "FLOP/B", .label = "AI L2",
     .description = "counted FLOPs / measured L2 bytes", .precision = 1}),
    derived<[](auto& d) -> auto& { return d.dram.regime; }>(
    {.tag = "profile/bound_dram", .json = "profile.levels.dram.regime",
     .label = "regime (ncu DRAM)",
     .description = "the regime at the measured DRAM AI against the DRAM bandwidth",
     .column_sets = ColumnSet::wide | ColumnSet::compact, .compact_part = CompactPart::bytes}),
    derived<[](auto& d) -> auto& { return d.l2.regime; }>(
    {.tag = "profile/bound_l2", .json = "profile.levels.l2.regime", .label = "regime (ncu L2)",
     .description = "the regime at the measured L2 AI against the L2 bandwidth of `ceilings`"}),
    derived<[](auto& d) -> auto& { return d.dram.roof_TFLOPs; }>(
    {.tag = "profile/roof_TFLOPs_dram", .json = "profile.levels.dram.roof_TFLOPs",
     .unit = "TFLOPS", .label = "DRAM roof TFLOPS",
     .description = "the roof at the measured DRAM AI: min(peak, DRAM bandwidth x AI)",
     .precision = 1}),
    derived<[](auto& d) -> auto& { return d.l2.roof_TFLOPs; }>(
    {.tag = "profile/roof_TFLOPs_l2", .json = "profile.levels.l2.roof_TFLOPs", .unit = "TFLOPS",
     .label = "L2 roof TFLOPS",
     .description = "the roof at the measured L2 AI: min(peak, L2 bandwidth x AI)",
     .precision = 1}),
    derived<[](auto& d) -> auto& { return d.dram.fraction_of_roof; }>(
    {.tag = "profile/fraction_of_roof_dram", .json = "profile.levels.dram.fraction_of_roof",
     .unit = "fraction", .label = "% roof (ncu DRAM)",
     .description = "achieved TFLOPS / the roof at the measured DRAM AI",
     .display = FigureDisplay::percent, .precision = 1,
     .column_sets = ColumnSet::wide | ColumnSet::compact, .compact_part = CompactPart::bytes}),
    derived<[](auto& d) -> auto& { return d.l2.fraction_of_roof; }>(
    {.tag = "profile/fraction_of_roof_l2", .json = "profile.levels.l2.fraction_of_roof",
     .unit = "fraction", .label = "% roof (ncu L2)",
     .description = "achieved TFLOPS / the roof at the measured L2 AI",
     .display = FigureDisplay::percent, .precision = 1}),
    derived<[](auto& d) -> auto& { return d.limiter; }>(
    {.tag = "profile/limiter", .json = "profile.limiter", .label = "limiter",
     .description = "what binds the launch: a pipe, dram or l2 at 80% of its peak or more, "
                    "else issue slots at 80% or more, else latency (its top stall); without "
                    "the pipe and issue counters, the resource nearest its own ceiling",
     .column_sets = ColumnSet::wide | ColumnSet::compact | ColumnSet::why,
     .compact_part = CompactPart::bytes}),
    derived<[](auto& d) -> auto& { return d.limiter_fraction; }>(
    {.tag = "profile/limiter_fraction", .json = "profile.limiter_fraction", .unit = "fraction",
     .label = "% limiter",
     .description = "the limiter's use of its peak; for latency, the cycles with no eligible "
                    "warp",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.tensor_pipe; }>(
    {.tag = "profile/tensor_pipe", .json = "profile.pipes.tensor", .unit = "fraction",
     .label = "tensor pipe",
     .description = "tensor pipe cycles active of peak (HMMA, mma.sync's; on gh100 the same "
                    "counter counts HGMMA, wgmma's)",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.fma_pipe; }>(
    {.tag = "profile/fma_pipe", .json = "profile.pipes.fma", .unit = "fraction",
     .label = "FMA pipe", .description = "FMA pipe instructions of its peak issue rate",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.lsu_pipe; }>(
    {.tag = "profile/lsu_pipe", .json = "profile.pipes.lsu", .unit = "fraction",
     .label = "LSU pipe", .description = "LSU pipe instructions of its peak issue rate",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.shared_pipe; }>(
    {.tag = "profile/shared_pipe", .json = "profile.pipes.shared", .unit = "fraction",
     .label = "shared pipe",
     .description = "shared-memory wavefronts of their peak over the launch",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.issue_slots; }>(
    {.tag = "profile/issue_slots", .json = "profile.issue.slots_used", .unit = "fraction",
     .label = "issue slots", .description = "instructions issued of the SMs' peak issue rate",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.no_eligible; }>(
    {.tag = "profile/no_eligible", .json = "profile.issue.no_eligible", .unit = "fraction",
     .label = "no eligible",
     .description = "a scheduler's active cycles in which no warp was eligible to issue",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.top_stalls; }>(
    {.tag = "profile/top_stalls", .json = "profile.issue.top_stalls", .label = "top stalls",
     .description = "the three stall reasons with the most warp-cycles, each with its share of "
                    "the stalled warp-cycles",
     .column_sets = ColumnSet::why}),
    derived<[](auto& d) -> auto& { return d.utilizations; }>(
    {.tag = "profile/utilizations", .json = "profile.utilizations", .label = "utilizations",
     .description = "every resource's use of its ceiling over ncu's duration"}),
    derived<[](auto& d) -> auto& { return d.counted_flops; }>(
    {.tag = "profile/counted_flops", .json = "profile.counted_flops", .unit = "FLOP",
     .label = "ncu GFLOP", .description = "FLOPs the counters count (profile.flop_counter)",
     .display = FigureDisplay::giga, .precision = 1}),
    derived<[](auto& d) -> auto& { return d.flop_counter; }>(
    {.tag = "profile/flop_counter", .json = "profile.flop_counter", .label = "FLOP counter",
     .description = "the counter of the compute unit's work and its FLOPs per count"}),
    derived<[](auto& d) -> auto& { return d.dram_model_error; }>(
    {.tag = "profile/dram_model_error", .json = "profile.checks.dram_model_error",
     .unit = "ratio", .label = "DRAM model err",
     .description = "the DRAM model's bytes / measured DRAM bytes - 1",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::wide,
     .may_be_negative = true}),
    derived<[](auto& d) -> auto& { return d.l2_model_error; }>(
    {.tag = "profile/l2_model_error", .json = "profile.checks.l2_model_error", .unit = "ratio",
     .label = "L2 model err",
     .description = "the kernel's own model's bytes (kv_reload, ...) / measured L2 bytes - 1",
     .display = FigureDisplay::percent, .precision = 1, .column_sets = ColumnSet::wide,
     .may_be_negative = true}),
    derived<[](auto& d) -> auto& { return d.flop_ratio; }>(
    {.tag = "profile/flop_ratio", .json = "profile.checks.flop_ratio", .unit = "ratio",
     .label = "FLOP ratio", .description = "counted FLOPs / the model's exact FLOPs",
     .precision = 4}),
    derived<[](auto& d) -> auto& { return d.flop_expected_ratio; }>(
    {.tag = "profile/flop_expected_ratio", .json = "profile.checks.flop_expected_ratio",
     .unit = "ratio", .label = "FLOP ratio expected",
     .description = "the FLOP ratio the tiling predicts: computed / unmasked pairs",
     .precision = 4}),
    derived<[](auto& d) -> auto& { return d.masked_work; }>(
    {.tag = "profile/masked_work", .json = "profile.checks.masked_work", .label = "masked work",
     .description = "the masked work diagonal tiles do anyway, named"}),
    derived<[](auto& d) -> auto& { return d.timing_ratio; }>(
    {.tag = "profile/timing_ratio", .json = "profile.checks.timing_ratio", .unit = "ratio",
     .label = "timing ratio", .description = "our median / ncu's gpu__time_duration.sum",
     .precision = 3, .column_sets = ColumnSet::wide}),
    derived<[](auto& d) -> auto& { return d.our_cycles; }>(
    {.tag = "profile/our_cycles", .json = "profile.checks.our_cycles", .unit = "cycles",
     .label = "our cycles", .description = "our median x the SM clock the probe read over our samples",
     .precision = 0}),
    derived<[](auto& d) -> auto& { return d.ncu_cycles; }>(
    {.tag = "profile/ncu_cycles", .json = "profile.checks.ncu_cycles", .unit = "cycles",
     .label = "ncu cycles", .description = "ncu's sm__cycles_elapsed.avg: SM cycles of the launch",
     .precision = 0}),
    derived<[](auto& d) -> auto& { return d.cycle_ratio; }>(
    {.tag = "profile/cycle_ratio", .json = "profile.checks.cycle_ratio", .unit = "ratio",
     .label = "cycle ratio", .description = "our cycles / ncu's cycles: the timing check without "
                                             "the clock",
     .precision = 3, .column_sets = ColumnSet::wide}),
    derived<[](auto& d) -> auto& { return d.process_cycles; }>(
    {.tag = "profile/process_cycles", .json = "profile.checks.process_cycles", .unit = "cycles",
     .label = "process cycles",
     .description = "our median in the profiled process, over ncu's buffers, x its SM clock "
                    "(profile.process_timing)",
     .precision = 0}),
    derived<[](auto& d) -> auto& { return d.timer_floor_cycles; }>(
    {.tag = "profile/timer_floor_cycles", .json = "profile.checks.timer_floor_cycles",
     .unit = "cycles", .label = "timer floor",
     .description = "what the events add to a row of as many kernels (empty kernels timed - "
                    "their ncu duration, profile.timer_floor) x the process's SM clock",
     .precision = 0, .may_be_negative = true}),
    derived<[](auto& d) -> auto& { return d.process_cycle_ratio; }>(
    {.tag = "profile/process_cycle_ratio", .json = "profile.checks.process_cycle_ratio",
     .unit = "ratio", .label = "process cycle ratio",
     .description = "(process cycles - timer floor) / ncu's cycles: the timing check of the "
                    "timer alone",
     .precision = 3, .column_sets = ColumnSet::wide}),
    derived<[](auto& d) -> auto& { return d.sweep_process_ratio; }>(
    {.tag = "profile/sweep_process_ratio", .json = "profile.checks.sweep_process_ratio",
     .unit = "ratio", .label = "sweep/process",
     .description = "our cycles in the sweep / in the profiled process: how far the two "
                    "processes' launches ran apart",
     .precision = 3, .column_sets = ColumnSet::wide}),
    {.tag = "profile/launch_spread", .unit = "ratio", .label = "launch spread",
     .description = "(largest - smallest) / median of the profiled launches' SM cycles "
                    "(profile.launches)",
     .source = FigureSource::measured, .group = FigureGroup::profile, .precision = 3,
     .column_sets = ColumnSet::wide, .read = read_launch_spread},

    // ---- energy: the board's energy counter around the row's launches (energy_figures)
    energy<[](auto& e) -> auto& { return e.joules_per_launch; }>(
    {.tag = "energy/joules_per_launch", .json = "energy.joules_per_launch", .unit = "J",
     .label = "J/launch",
     .description = "the board's joules over the run (NVML's energy counter) / its launches",
     .precision = 4, .column_sets = ColumnSet::wide}),
    energy<[](auto& e) -> auto& { return e.average_W; }>(
    {.tag = "energy/average_W", .json = "energy.average_W", .unit = "W", .label = "W",
     .description = "the board's joules over the run / its seconds; idle power included",
     .precision = 0, .column_sets = ColumnSet::wide}),
    energy<[](auto& e) -> auto& { return e.flop_per_J; }>(
    {.tag = "energy/flop_per_J", .json = "energy.flop_per_J", .unit = "FLOP/J",
     .label = "GFLOP/J", .description = "counted FLOPs / J per launch",
     .display = FigureDisplay::giga, .precision = 1, .column_sets = ColumnSet::wide}),
    energy<[](auto& e) -> auto& { return e.idle_W; }>(
    {.tag = "energy/idle_W", .json = "energy.idle_W", .unit = "W", .label = "idle W",
     .description = "the board at rest, once per device before its first row; not subtracted",
     .precision = 0, .column_sets = ColumnSet::wide}),
    energy<[](auto& e) -> auto& { return e.run_s; }>(
    {.tag = "energy/run_s", .json = "energy.run_s", .unit = "s", .label = "energy run s",
     .description = "seconds from the run's first counter reading to its last",
     .precision = 2}),
    energy<[](auto& e) -> auto& { return e.resolution_mJ; }>(
    {.tag = "energy/resolution_mJ", .json = "energy.resolution_mJ", .unit = "mJ",
     .label = "counter step mJ",
     .description = "the counter's smallest nonzero step over the run (under 1% of its energy)",
     .precision = 0}),
    energy<[](auto& e) -> auto& { return e.update_period_s; }>(
    {.tag = "energy/update_period_s", .json = "energy.update_period_s", .unit = "s",
     .label = "counter period s",
     .description = "median time between the counter's changes (under 1% of the run)",
     .precision = 4}),
    energy<[](auto& e) -> auto& { return e.sm_clock_MHz; }>(
    {.tag = "energy/sm_clock_MHz", .json = "energy.sm_clock_MHz", .unit = "MHz",
     .label = "energy SM MHz", .description = "mean SM clock NVML read during the run",
     .precision = 0}),
    energy<[](auto& e) -> auto& { return e.temperature_C; }>(
    {.tag = "energy/temperature_C", .json = "energy.temperature_C", .unit = "C",
     .label = "max temp C", .description = "the hottest GPU temperature NVML read during the run",
     .precision = 0}),
    energy<[](auto& e) -> auto& { return e.power_W; }>(
    {.tag = "energy/power_W", .json = "energy.power_W", .unit = "W", .label = "smi W",
     .description = "mean of NVML's power reading during the run, the figure nvidia-smi prints",
     .precision = 0}),

    // ---- historical: a source document's columns as printed (configs/historical/)
    number<[](auto& r) -> auto& { return r.claimed->time_ms; }>(
    {.tag = "historical/time_ms", .json = "claimed.time_ms", .unit = "ms",
     .label = "claimed ms", .description = "the time the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 3}),
    number<[](auto& r) -> auto& { return r.claimed->flops_G; }>(
    {.tag = "historical/flops_G", .json = "claimed.flops_G", .unit = "GFLOP",
     .label = "claimed GFLOP", .description = "the FLOP count the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 1}),
    number<[](auto& r) -> auto& { return r.claimed->TFLOPs; }>(
    {.tag = "historical/TFLOPs", .json = "claimed.TFLOPs", .unit = "TFLOPS",
     .label = "claimed TFLOPS", .description = "the FLOP rate the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 2}),
    number<[](auto& r) -> auto& { return r.claimed->traffic_GB; }>(
    {.tag = "historical/traffic_GB", .json = "claimed.traffic_GB", .unit = "GB",
     .label = "claimed GB", .description = "the HBM traffic the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 3}),
    number<[](auto& r) -> auto& { return r.claimed->bandwidth_GBps; }>(
    {.tag = "historical/bandwidth_GBps", .json = "claimed.bandwidth_GBps", .unit = "GB/s",
     .label = "claimed GB/s", .description = "the bandwidth the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 0}),
    number<[](auto& r) -> auto& { return r.claimed->bandwidth_utilization_percent; }>(
    {.tag = "historical/bandwidth_utilization_percent",
     .json = "claimed.bandwidth_utilization_percent", .unit = "percent",
     .label = "claimed % BW", .description = "the bandwidth utilization the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 1}),
    number<[](auto& r) -> auto& { return r.claimed->ai_eff; }>(
    {.tag = "historical/ai_eff", .json = "claimed.ai_eff", .unit = "FLOP/B",
     .label = "claimed AI", .description = "the effective AI the document printed",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 1}),
    {.tag = "historical/regime", .json = "claimed.regime", .label = "claimed regime",
     .description = "the regime as the document worded it",
     .source = FigureSource::historical, .group = FigureGroup::claimed,
     .read = read_claimed_regime, .store = store_claimed_regime},
    number<[](auto& r) -> auto& { return r.claimed->ridge_distance; }>(
    {.tag = "historical/ridge_distance", .json = "claimed.ridge_distance", .unit = "ratio",
     .label = "claimed ridge / AI", .description = "the document's \"N x below the ridge\"",
     .source = FigureSource::historical, .group = FigureGroup::claimed, .precision = 2}),
});
// clang-format on

}  // namespace

std::string_view to_string(FigureSource source) {
  switch (source) {
    case FigureSource::model: return "model";
    case FigureSource::measured: return "measured";
    case FigureSource::derived: return "derived";
    case FigureSource::ceiling: return "ceiling";
    case FigureSource::historical: return "historical";
  }
  return "?";
}

std::span<const Figure> row_figures() {
  return figures;
}

const Figure* find_figure(std::string_view tag) {
  for (const Figure& f : figures) {
    if (f.tag == tag) return &f;
  }
  return nullptr;
}

const Figure& figure(std::string_view tag) {
  const Figure* found = find_figure(tag);
  if (found == nullptr) throw std::invalid_argument(fmt::format("unknown figure '{}'", tag));
  return *found;
}

bool has_group(const ResultRow& row, FigureGroup group) {
  switch (group) {
    case FigureGroup::model: return row.model.has_value();
    case FigureGroup::roofline: return row.model && row.model->roofline;
    case FigureGroup::timing: return row.timing.has_value();
    case FigureGroup::achieved: return row.achieved.has_value();
    case FigureGroup::claimed: return row.claimed.has_value();
    case FigureGroup::profile: return row.model && row.profile && row.profile->collected();
    case FigureGroup::energy: return row.model && row.energy && row.energy->collected();
  }
  return false;
}

FigureValue figure_value(const Figure& figure, const ResultRow& row) {
  return has_group(row, figure.group) ? figure.read(row) : FigureValue();
}

std::optional<double> figure_number(const Figure& figure, const ResultRow& row) {
  const FigureValue value = figure_value(figure, row);
  if (const double* number = std::get_if<double>(&value)) return *number;
  return std::nullopt;
}

std::string display_unit(const Figure& figure) {
  switch (figure.display) {
    case FigureDisplay::plain: return std::string(figure.unit);
    case FigureDisplay::giga: return figure.unit == "B" ? "GB" : fmt::format("G{}", figure.unit);
    case FigureDisplay::percent: return "%";
  }
  return "";
}

std::string format_figure(const Figure& figure, const FigureValue& value) {
  if (const std::string* word = std::get_if<std::string>(&value)) return *word;
  const double* number = std::get_if<double>(&value);
  if (number == nullptr) return "-";
  switch (figure.display) {
    case FigureDisplay::plain: return fmt::format("{:.{}f}", *number, figure.precision);
    case FigureDisplay::giga: return fmt::format("{:.{}f}", *number / 1e9, figure.precision);
    case FigureDisplay::percent: return fmt::format("{:.{}f}", 100 * *number, figure.precision);
  }
  return "-";
}

std::string format_figure_raw(const Figure& figure, const FigureValue& value) {
  if (const std::string* word = std::get_if<std::string>(&value)) return *word;
  const double* number = std::get_if<double>(&value);
  if (number == nullptr) return "";
  switch (figure.display) {
    case FigureDisplay::plain: return fmt::format("{}", *number);
    case FigureDisplay::giga: return fmt::format("{}", *number / 1e9);
    case FigureDisplay::percent: return fmt::format("{}", 100 * *number);
  }
  return "";
}

}  // namespace cfr
