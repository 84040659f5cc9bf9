#pragma once

// Text that goes into SVG/XML, from reports whose strings are user input:
// escaped, and stripped of what XML 1.0 cannot hold at all.

#include <string>
#include <string_view>

namespace cfr::evidence {

// Escapes & < > " ' for use in element text and quoted attributes. Control
// characters XML forbids, and bytes that are not valid UTF-8, become '?'.
std::string xml_escape(std::string_view text);

}  // namespace cfr::evidence
