#pragma once

// Parses JSON text the way every file this tool reads must be read (reports,
// ceilings, GPU tables, historical tables). nlohmann's parser keeps the last
// of two equal keys, so a second `"auditable": true` would silently override
// the first; it reports a number beyond double range without the key; and
// the documents it builds can nest without bound. Here each of those is an
// error naming the key path, e.g. `results[3].timing.samples_ms[2]`.

#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "roofline/core/errors.hpp"

namespace cfr {

// Deeper than any document the tool writes (a report nests 5 levels).
inline constexpr std::size_t max_json_depth = 64;

// Throws InputError for invalid JSON (a NUL byte anywhere included), a key
// repeated within one object, a number outside the range of a double, or
// nesting deeper than max_json_depth. what() is one line: "KEY PATH:
// problem", or "not valid JSON (byte N)" for text that is not JSON at all.
nlohmann::json parse_strict_json(std::string_view text);

}  // namespace cfr
