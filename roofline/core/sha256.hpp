#pragma once

// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: how a
// report names the exact plugin file a row was measured with. Written here
// rather than linked from a crypto library: ~80 lines against a new runtime
// dependency of the tool for one digest of one file per plugin.

#include <string>
#include <string_view>

namespace cfr {

std::string sha256_hex(std::string_view bytes);

}  // namespace cfr
