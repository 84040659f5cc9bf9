#pragma once

#include <string>

#include "roofline/model/traffic_model.hpp"

// One tensor's bytes in a traffic breakdown; -1 when the breakdown lacks it.
inline double tensor(const cfr::TrafficEstimate& t, const std::string& name) {
  for (const cfr::TensorBytes& entry : t.breakdown) {
    if (entry.tensor == name) return entry.bytes;
  }
  return -1;
}
