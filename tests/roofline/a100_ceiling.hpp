#pragma once

#include "roofline/report/report.hpp"

// The A100 80 GB SXM4 datasheet roofs (configs/gpus.json): 2039 GB/s; fp32 SIMT 19.5,
// fp16 SIMT 78, fp16 and bf16 tensor 312 TFLOP/s.
inline cfr::CeilingRecord a100_ceiling() {
  cfr::CeilingRecord c;
  c.gpu = "a100";
  c.source = "datasheet";
  c.bandwidth_GBps = 2039;
  c.peak_TFLOPs = {19.5, 78, 312, 312};
  return c;
}
