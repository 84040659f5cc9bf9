#pragma once

// The seed's historical measurement tables (configs/historical/, schema
// "cuflash-roofline/historical/v1") and the report/v1 documents that
// `import-historical` makes of them. A report is judged against one ceiling,
// so there is one report per GPU of the table.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "roofline/core/errors.hpp"
#include "roofline/model/gpu_table.hpp"
#include "roofline/report/report.hpp"

namespace cfr::evidence {

inline constexpr std::string_view historical_schema = "cuflash-roofline/historical/v1";

struct HistoricalRow {
  std::string gpu;  // as the document prints it: "V100"
  std::int64_t seq_len = 0;
  ClaimedFigures claimed;
};

struct HistoricalTable {
  std::string name;                  // "v0.4.0"
  std::string kernel;                // the name the reports give the rows
  std::string document;              // where the numbers were copied from
  std::vector<std::string> reasons;  // the document's own caveats
  Direction direction = Direction::forward;
  AttentionProblem shape;  // seq_len comes from each row
  std::vector<HistoricalRow> rows;

  // In order of first appearance.
  std::vector<std::string> gpus() const;
};

// Strict like report_from_json: throws InputError naming the key path. A
// table whose provenance is not "historical" or that calls itself auditable
// is refused: nothing typed in by hand is evidence.
// A seed's table holds a dozen rows; one of more than this many is not a
// document's table, and importing it would write a report per GPU of that size.
inline constexpr std::size_t max_historical_rows = 10000;

HistoricalTable parse_historical_table(const nlohmann::json& document);

// The GPU table row of a printed GPU name ("V100" is the row "v100").
// Throws InputError naming the rows[i].gpu that has none.
const GpuSpec& historical_gpu(const HistoricalTable& table, std::string_view gpu,
                              const GpuTable& gpus);

// One GPU's rows as a report: provenance source historical, auditable false,
// the table's caveats plus "no raw samples" as reasons, the GPU's datasheet
// ceiling, and per row our model figures (model_row with the v0.4.0 kernel
// description), the printed time as the timing median with no samples,
// achieved figures from it, and the printed columns under `claimed`. Tool,
// created_utc, command and host are the caller's to fill.
Report historical_report(const HistoricalTable& table, std::string_view gpu, const GpuTable& gpus);

// The reason every historical report carries besides the document's own.
inline constexpr std::string_view no_samples_reason =
    "no raw samples: each row holds one time as the document printed it";

}  // namespace cfr::evidence
