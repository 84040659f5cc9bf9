#pragma once

// Parses --devices: "all" or a comma-separated list of device indices.
// Pure host code, no CUDA.

#include <string_view>
#include <vector>

namespace cfr::measure {

// Returns the indices in the order given ("all": 0 .. device_count - 1).
// Spaces around items are ignored. Throws std::invalid_argument with a
// one-line message for: an empty spec or item, a non-integer item, an index
// that does not exist ("device 3 does not exist (this machine has 1 CUDA
// device)"), an index listed twice, and "all" on a machine without devices.
std::vector<int> parse_device_list(std::string_view spec, int device_count);

// The same grammar without a device to check against: throws what
// parse_device_list throws for an empty or non-integer item, a negative or
// repeated index; "all" and any index pass (a machine without devices still
// refuses `--devices abc`).
void check_device_list(std::string_view spec);

}  // namespace cfr::measure
