#pragma once

// A small, strict XML reader for the SVG tests: enough of XML 1.0 to prove a
// document well-formed (one root, matched tags, quoted unique attributes,
// known entities, valid UTF-8, no forbidden control characters) and to read
// its elements back. Throws std::runtime_error naming the byte offset.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;  // entity-decoded
  std::vector<XmlElement> children;
  std::string text;  // character data directly inside, decoded

  bool has_class(std::string_view name) const;
  const std::string& attribute(const std::string& key) const;  // throws when absent
  double number(const std::string& key) const;
};

XmlElement parse_xml(std::string_view document);

// Every element below `root` (depth first, document order) that matches.
std::vector<const XmlElement*> find_all(const XmlElement& root,
                                        const std::function<bool(const XmlElement&)>& match);
