#include "roofline/report/ceilings_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "roofline/report/json_reader.hpp"
#include "roofline/report/report_json.hpp"
#include "roofline/report/report_values.hpp"

namespace cfr {

const CeilingFigure* CeilingsReport::find(std::string_view figure) const {
  for (const CeilingFigure& f : figures) {
    if (f.figure == figure) return &f;
  }
  return nullptr;
}

std::optional<double> CeilingsReport::best_peak(ComputeUnit unit) const {
  std::optional<double> best;
  for (const CeilingFigure& f : figures) {
    if (f.compute_unit == unit && (!best || f.value > *best)) best = f.value;
  }
  return best;
}

std::optional<double> CeilingsReport::read_bandwidth() const {
  const CeilingFigure* read = find(dram_read_figure);
  return read ? std::optional(read->value) : std::nullopt;
}

namespace {

std::optional<double> work_per_J(const CeilingFigure& f) {
  return f.energy ? f.energy->derived.work_per_J : std::nullopt;
}

}  // namespace

std::optional<double> CeilingsReport::best_flop_per_J(ComputeUnit unit) const {
  std::optional<double> best;
  for (const CeilingFigure& f : figures) {
    const std::optional<double> per_J = work_per_J(f);
    if (f.compute_unit == unit && per_J && (!best || *per_J > *best)) best = per_J;
  }
  return best;
}

std::optional<double> CeilingsReport::dram_bytes_per_J() const {
  const CeilingFigure* dram = find("dram_bandwidth");
  return dram ? work_per_J(*dram) : std::nullopt;
}

std::optional<double> fraction_of_datasheet(const CeilingFigure& figure) {
  if (!figure.datasheet_value) return std::nullopt;
  return figure.value / *figure.datasheet_value;
}

namespace {

// The raw part (energy_json), the work per launch, and every derived figure
// under its key for the figure's work (null where absent).
nlohmann::json ceiling_energy_json(const CeilingEnergy& e, EnergyWork work) {
  nlohmann::json out = energy_json(e.run);
  out["work_per_launch"] = e.work_per_launch;
  for (const CeilingEnergyField& field : ceiling_energy_fields()) {
    const std::optional<double>& value = e.derived.*field.member;
    out[std::string(field.key(work))] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
  return out;
}

CeilingEnergy read_ceiling_energy(const Node& n, EnergyWork work) {
  CeilingEnergy e;
  e.run = read_energy(n);
  e.work_per_launch = n.number("work_per_launch");
  for (const CeilingEnergyField& field : ceiling_energy_fields()) {
    e.derived.*field.member = n.optional_number(field.key(work));
  }
  return e;
}

std::string figure_text(const std::optional<double>& x, std::string_view format) {
  return x ? fmt::format(fmt::runtime(format), *x) : "-";
}

// The energy lines of the figures that have energy; empty when none has.
std::string render_ceiling_energy(const CeilingsReport& report) {
  std::string out;
  for (const CeilingFigure& f : report.figures) {
    if (!f.energy) continue;
    if (out.empty()) {
      out =
          "\nEnergy of each figure's run of launches (the whole board, idle included; "
          "docs/energy.md)\n";
      out += fmt::format("{:<21} {:>10} {:>7} {:>16} {:>14} {:>7} {:>6} {:>7}\n", "figure",
                         "J/launch", "W", "work/J", "pJ/work", "SM MHz", "max C", "idle W");
    }
    if (!f.energy->collected()) {
      out += fmt::format("{:<21} unavailable: {}\n", f.figure, f.energy->run.unavailable);
      continue;
    }
    const CeilingEnergyDerived& d = f.energy->derived;
    const bool flop = energy_work(f.unit) == EnergyWork::flop;
    out +=
        fmt::format("{:<21} {:>10} {:>7} {:>16} {:>14} {:>7} {:>6} {:>7}\n", f.figure,
                    figure_text(d.joules_per_launch, "{:.4g}"), figure_text(d.average_W, "{:.1f}"),
                    figure_text(d.work_per_J, flop ? "{:.4g} FLOP/J" : "{:.4g} B/J"),
                    figure_text(d.pJ_per_work, flop ? "{:.4g} pJ/FLOP" : "{:.4g} pJ/B"),
                    figure_text(d.sm_clock_MHz, "{:.0f}"), figure_text(d.temperature_C, "{:.0f}"),
                    figure_text(d.idle_W, "{:.1f}"));
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const CeilingsReport& r) {
  nlohmann::json figures = nlohmann::json::array();
  for (const CeilingFigure& f : r.figures) {
    figures.push_back({{"figure", f.figure},
                       {"unit", f.unit},
                       {"value", f.value},
                       {"samples", f.samples},
                       {"method", f.method},
                       {"compute_unit", f.compute_unit ? nlohmann::json(to_string(*f.compute_unit))
                                                       : nlohmann::json(nullptr)},
                       {"datasheet_value", f.datasheet_value ? nlohmann::json(*f.datasheet_value)
                                                             : nlohmann::json(nullptr)},
                       {"fraction_of_datasheet", fraction_of_datasheet(f)
                                                     ? nlohmann::json(*fraction_of_datasheet(f))
                                                     : nlohmann::json(nullptr)},
                       {"sm_clock_MHz", f.sm_clock_MHz}});
    if (f.energy) figures.back()["energy"] = ceiling_energy_json(*f.energy, energy_work(f.unit));
  }
  return {{"schema", r.schema},
          {"tool", to_json(r.tool)},
          {"provenance", to_json(r.provenance)},
          {"device", to_json(r.device)},
          {"datasheet_gpu", r.datasheet_gpu},
          {"figures", figures}};
}

CeilingsReport ceilings_from_json(const nlohmann::json& document) {
  const Node top(document, "");
  CeilingsReport r;
  r.schema = top.string("schema");
  if (r.schema != ceilings_schema) {
    throw InputError(fmt::format("schema: expected '{}', found '{}'", ceilings_schema, r.schema));
  }
  r.tool = read_tool(top.object("tool"));
  r.provenance = read_provenance(top.object("provenance"));
  r.device = read_device(top.object("device"));
  r.datasheet_gpu = top.string("datasheet_gpu");
  const nlohmann::json& figures = top.array("figures");
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const Node f(figures[i], fmt::format("figures[{}]", i));
    CeilingFigure figure;
    figure.figure = f.string("figure");
    figure.unit = f.string("unit");
    figure.value = f.positive("value");
    figure.method = f.string("method");
    if (f.has("compute_unit")) {
      figure.compute_unit = f.named("compute_unit", parse_compute_unit, "compute unit");
    }
    figure.datasheet_value = f.optional_positive("datasheet_value");
    figure.reported_fraction_of_datasheet = f.optional_positive("fraction_of_datasheet");
    const nlohmann::json& samples = f.array("samples");
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const nlohmann::json& sample = samples[k];
      if (!sample.is_number() || !std::isfinite(sample.get<double>()) ||
          !(sample.get<double>() > 0)) {
        throw InputError(
            fmt::format("{}[{}]: must be a positive number", f.key_path("samples"), k));
      }
      figure.samples.push_back(sample.get<double>());
    }
    if (f.has("energy")) {
      figure.energy = read_ceiling_energy(f.object("energy"), energy_work(figure.unit));
    }
    r.figures.push_back(std::move(figure));
  }
  return r;
}

CeilingRecord measured_ceiling_record(const CeilingsReport& measured,
                                      const CeilingRecord& datasheet, std::string_view origin) {
  CeilingRecord ceiling = datasheet;
  ceiling.source = "measured";
  std::string detail = fmt::format("{} (measured on {}, {})", origin, measured.device.name,
                                   measured.provenance.created_utc);
  if (const CeilingFigure* dram = measured.find("dram_bandwidth")) {
    ceiling.bandwidth_GBps = dram->value;
  } else {
    detail += "; bandwidth from the datasheet";
  }
  if (const CeilingFigure* l2 = measured.find("l2_bandwidth")) {
    ceiling.l2_bandwidth_GBps = l2->value;
  }
  ceiling.read_bandwidth_GBps = measured.read_bandwidth();
  if (const CeilingFigure* shared = measured.find(shared_memory_figure)) {
    ceiling.shared_memory_GBps = shared->value;
  }
  for (const CeilingFigure& f : measured.figures) {
    if (f.compute_unit) ceiling.instruction_TFLOPs[f.figure] = f.value;
  }
  for (ComputeUnit unit : all_compute_units) {
    if (const auto peak = measured.best_peak(unit)) {
      ceiling.peak_TFLOPs[static_cast<std::size_t>(unit)] = peak;
    } else if (datasheet.peak(unit)) {
      detail += fmt::format("; {} from the datasheet", to_string(unit));
    }
  }
  ceiling.source_detail = detail;
  check_ceiling_values(ceiling, "ceiling");
  return ceiling;
}

std::string render_ceilings_table(const CeilingsReport& report) {
  std::string out =
      fmt::format("Measured ceilings of device {} ({}), compared with the '{}' datasheet\n",
                  report.device.index, report.device.name, report.datasheet_gpu);
  out += fmt::format("{:<20} {:>10} {:<8} {:>10} {:>7} {:>8}  {}\n", "figure", "median", "unit",
                     "datasheet", "ratio", "samples", "method");
  for (const CeilingFigure& f : report.figures) {
    out += fmt::format("{:<20} {:>10.1f} {:<8} {:>10} {:>7} {:>8}  {}\n", f.figure, f.value, f.unit,
                       f.datasheet_value ? fmt::format("{:.1f}", *f.datasheet_value) : "-",
                       f.datasheet_value ? fmt::format("{:.3f}", *fraction_of_datasheet(f)) : "-",
                       f.samples.size(), f.method);
  }
  out +=
      "median over samples (each a rate from one CUDA-event-timed run); raw samples in the "
      "JSON.\n";
  return out + render_ceiling_energy(report);
}

}  // namespace cfr
