#pragma once

// The rows `sweep --profile` hands to its single-launch child
// (`cuflash-roofline profile-child`), one line each:
//   <report row index> <kernel> <dtype> <batch> <heads> <seq_len> <head_dim> <causal 0|1> <device>
// The index names the NVTX range (cfr_row_<index>) the child launches in.

#include <string>
#include <vector>

#include "roofline/core/attention_problem.hpp"

namespace cfr::app {

struct ProfileRow {
  std::size_t index = 0;
  std::string kernel;
  AttentionProblem problem;
  int device = 0;
};

std::string format_profile_rows(const std::vector<ProfileRow>& rows);
// Throws std::invalid_argument naming the line that is not a row.
std::vector<ProfileRow> parse_profile_rows(const std::string& text);

}  // namespace cfr::app
