#include "profile_rows.hpp"

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr::app {

std::string format_profile_rows(const std::vector<ProfileRow>& rows) {
  std::string out;
  for (const ProfileRow& r : rows) {
    const AttentionProblem& p = r.problem;
    // The served fields spelled out (keys, K/V heads, page size), so the
    // child launches the row's own shape.
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}\n", r.index, r.kernel,
                       to_string(p.dtype), p.batch, p.heads, p.seq_len, p.head_dim,
                       p.causal ? 1 : 0, r.device, p.keys(), p.key_heads(), p.page_size);
  }
  return out;
}

std::vector<ProfileRow> parse_profile_rows(const std::string& text) {
  std::vector<ProfileRow> rows;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    ProfileRow row;
    std::string dtype;
    int causal = -1;
    std::string rest;
    fields >> row.index >> row.kernel >> dtype >> row.problem.batch >> row.problem.heads >>
        row.problem.seq_len >> row.problem.head_dim >> causal >> row.device >> row.problem.kv_len >>
        row.problem.kv_heads >> row.problem.page_size;
    const auto parsed = parse_dtype(dtype);
    if (fields.fail() || (fields >> rest) || !parsed || (causal != 0 && causal != 1) ||
        row.problem.kv_len < 1 || row.problem.kv_heads < 1 || row.problem.page_size < 0) {
      throw std::invalid_argument(
          fmt::format("profile rows, line {}: not a row: '{}'", number, line));
    }
    row.problem.dtype = *parsed;
    row.problem.causal = causal == 1;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace cfr::app
