#pragma once

// The HTML page's style sheet and script, inlined into every page: the page
// loads nothing, and its Content-Security-Policy makes any load fail loudly
// (a browser logs the refusal; tests/html/test_browser.cpp looks for it).

#include <string_view>

namespace cfr::html {

inline constexpr std::string_view content_security_policy =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

// Light and dark (prefers-color-scheme), the chart at the page's width.
std::string_view page_style();

// Makes each chart point focusable and names it (tabindex, role, aria-label),
// shows a row's figures on hover and focus, selects a point and its row on a
// click or Enter (from either side), sorts tables by their headers, writes
// any error it meets into #script-status, and with #selftest in the address
// checks that no chart label overlaps another as drawn and that every text
// of the chart (its legend too) lies inside it, selects every point
// in turn, sorts a table, and writes the outcome into #selftest.
std::string_view page_script();

}  // namespace cfr::html
