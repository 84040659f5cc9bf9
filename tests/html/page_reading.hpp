#pragma once

// Reading an HTML page of `report --html` back in the tests: the page
// without its script and style is XML (report_page.hpp), so the strict
// reader of the SVG tests proves it well-formed and finds its elements.

#include <string>
#include <string_view>

#include "../evidence/xml_check.hpp"

// The page with the bodies of <script> and <style> emptied and the doctype
// dropped: what must parse as XML.
std::string markup_only(std::string_view page);

XmlElement parse_page(std::string_view page);

// The text of an element and everything inside it, decoded.
std::string all_text(const XmlElement& element);

// How often `needle` occurs in `text`.
std::size_t occurrences(std::string_view text, std::string_view needle);
