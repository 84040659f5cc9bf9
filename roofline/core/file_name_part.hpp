#pragma once

// A name from a data file that becomes part of a file name (a GPU id in
// NAME-ID.json, a historical table's name): plain enough that it cannot
// leave the output folder or hide as a dot file.

#include <algorithm>
#include <cctype>
#include <string_view>

namespace cfr {

// Letters, digits, '_', '-' and '.', not empty and not starting with '.'.
inline bool is_file_name_part(std::string_view name) {
  return !name.empty() && !name.starts_with('.') &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::isalnum(c) || c == '_' || c == '-' || c == '.';
         });
}

}  // namespace cfr
