#pragma once

#include "roofline/core/attention_problem.hpp"

// The seed's headline configuration (roofline-analysis.zh.md §4.1):
// B = 1, H = 8, N = 16384, d = 64, fp16.
inline cfr::AttentionProblem seed_shape(bool causal = false) {
  return {1, 8, 16384, 64, causal, cfr::DType::fp16};
}
