#include "page_reading.hpp"

#include <stdexcept>

namespace {

// `text` with what lies between each <NAME> and </NAME> removed.
std::string emptied(std::string text, std::string_view name) {
  // Appended, not "<" + name: GCC 12 warns falsely (-Wrestrict) on the sum.
  std::string open = "<";
  open.append(name).append(">");
  std::string close = "</";
  close.append(name).append(">");
  for (std::size_t from = 0; (from = text.find(open, from)) != std::string::npos;) {
    const std::size_t body = from + open.size();
    const std::size_t end = text.find(close, body);
    if (end == std::string::npos) throw std::runtime_error(open + " is not closed");
    text.erase(body, end - body);
    from = body + close.size();
  }
  return text;
}

}  // namespace

std::string markup_only(std::string_view page) {
  std::string text(page);
  const std::string doctype = "<!DOCTYPE html>\n";
  if (text.starts_with(doctype)) text.erase(0, doctype.size());
  return emptied(emptied(text, "script"), "style");
}

XmlElement parse_page(std::string_view page) {
  return parse_xml(markup_only(page));
}

std::string all_text(const XmlElement& element) {
  std::string out = element.text;
  for (const XmlElement& child : element.children) out += all_text(child);
  return out;
}

std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}
