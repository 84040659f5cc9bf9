#pragma once

// Parses sweep axes given on the command line, in nvbench's forms: a list
// "1024,2048", a range "1024:16384:x2" (geometric), "64:256:+64"
// (arithmetic) or "1:8" (step +1), powers of two "[pow2]10:14" (exponents,
// 1024…16384) or "[pow2]12", and mixes "128, 1024:4096:x2" (spaces around
// items are ignored). Throws std::invalid_argument naming the bad text.
// Every value is positive; the list is counted before it is built, so a
// range with more than max_axis_values values fails without allocating.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cfr {

inline constexpr std::size_t max_axis_values = 100000;

std::vector<std::int64_t> parse_axis_values(std::string_view text, std::string_view axis_name);

// The items of a comma-separated list, each with surrounding spaces removed.
// Throws std::invalid_argument ("NAME: empty list", "NAME: empty item in
// 'TEXT'") for an empty list or item.
std::vector<std::string_view> split_list(std::string_view text, std::string_view name);

}  // namespace cfr
