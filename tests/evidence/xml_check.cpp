#include "xml_check.hpp"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  XmlElement document() {
    check_characters();
    if (starts("<?xml")) skip_past("?>");
    skip_misc();
    if (!starts("<")) fail("expected the root element");
    XmlElement root = element();
    skip_misc();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML byte " + std::to_string(i_) + ": " + what);
  }

  // Valid UTF-8, and none of the control characters XML 1.0 forbids.
  void check_characters() {
    for (std::size_t k = 0; k < s_.size();) {
      const auto c = static_cast<unsigned char>(s_[k]);
      std::size_t length = c < 0x80             ? 1
                           : (c & 0xE0) == 0xC0 ? 2
                           : (c & 0xF0) == 0xE0 ? 3
                           : (c & 0xF8) == 0xF0 ? 4
                                                : 0;
      i_ = k;
      if (length == 0 || k + length > s_.size()) fail("invalid UTF-8");
      for (std::size_t m = 1; m < length; ++m) {
        if ((static_cast<unsigned char>(s_[k + m]) & 0xC0) != 0x80) fail("invalid UTF-8");
      }
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') fail("forbidden control character");
      k += length;
    }
    i_ = 0;
  }

  bool starts(std::string_view prefix) const { return s_.substr(i_).starts_with(prefix); }

  void skip_past(std::string_view end) {
    const auto at = s_.find(end, i_);
    if (at == std::string_view::npos) fail("unterminated construct");
    i_ = at + end.size();
  }

  void skip_space() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) {
      ++i_;
    }
  }

  void skip_misc() {
    for (;;) {
      skip_space();
      if (starts("<!--")) {
        skip_past("-->");
      } else {
        return;
      }
    }
  }

  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ':' ||
           c == '.';
  }

  std::string name() {
    const std::size_t start = i_;
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    if (i_ == start) fail("expected a name");
    return std::string(s_.substr(start, i_ - start));
  }

  // Decodes one entity reference starting at '&'.
  std::string entity() {
    const auto end = s_.find(';', i_);
    if (end == std::string_view::npos || end - i_ > 10) fail("unterminated entity");
    const std::string_view body = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    if (body == "amp") return "&";
    if (body == "lt") return "<";
    if (body == "gt") return ">";
    if (body == "quot") return "\"";
    if (body == "apos") return "'";
    if (!body.empty() && body[0] == '#') {
      const bool hex = body.size() > 1 && body[1] == 'x';
      const long code =
          std::strtol(std::string(body.substr(hex ? 2 : 1)).c_str(), nullptr, hex ? 16 : 10);
      if (code < 0x20 || code > 0x7E) fail("character reference outside printable ASCII");
      return std::string(1, static_cast<char>(code));
    }
    fail("unknown entity &" + std::string(body) + ";");
  }

  std::string attribute_value() {
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("attribute value not quoted");
    const char quote = s_[i_++];
    std::string value;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '<') fail("'<' inside an attribute value");
      if (s_[i_] == '&') {
        value += entity();
      } else {
        value += s_[i_++];
      }
    }
    if (i_ >= s_.size()) fail("unterminated attribute value");
    ++i_;
    return value;
  }

  XmlElement element() {
    ++i_;  // '<'
    XmlElement e;
    e.name = name();
    for (;;) {
      const std::size_t before = i_;
      skip_space();
      if (starts("/>")) {
        i_ += 2;
        return e;
      }
      if (starts(">")) {
        ++i_;
        break;
      }
      if (i_ == before) fail("expected whitespace before an attribute");
      const std::string key = name();
      skip_space();
      if (!starts("=")) fail("expected '=' after attribute " + key);
      ++i_;
      skip_space();
      if (!e.attributes.emplace(key, attribute_value()).second) fail("duplicate attribute " + key);
    }
    for (;;) {
      if (i_ >= s_.size()) fail("unclosed element <" + e.name + ">");
      if (starts("</")) {
        i_ += 2;
        if (name() != e.name) fail("mismatched end tag for <" + e.name + ">");
        skip_space();
        if (!starts(">")) fail("expected '>'");
        ++i_;
        return e;
      }
      if (starts("<!--")) {
        skip_past("-->");
      } else if (starts("<")) {
        e.children.push_back(element());
      } else if (s_[i_] == '&') {
        e.text += entity();
      } else {
        if (s_[i_] == '>' && i_ >= 2 && s_.substr(i_ - 2, 2) == "]]") fail("']]>' in text");
        e.text += s_[i_++];
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

void collect(const XmlElement& e, const std::function<bool(const XmlElement&)>& match,
             std::vector<const XmlElement*>& out) {
  for (const XmlElement& child : e.children) {
    if (match(child)) out.push_back(&child);
    collect(child, match, out);
  }
}

}  // namespace

bool XmlElement::has_class(std::string_view wanted) const {
  const auto it = attributes.find("class");
  if (it == attributes.end()) return false;
  std::string_view classes = it->second;
  while (!classes.empty()) {
    const auto space = classes.find(' ');
    if (classes.substr(0, space) == wanted) return true;
    if (space == std::string_view::npos) break;
    classes.remove_prefix(space + 1);
  }
  return false;
}

const std::string& XmlElement::attribute(const std::string& key) const {
  const auto it = attributes.find(key);
  if (it == attributes.end()) throw std::runtime_error("<" + name + "> has no attribute " + key);
  return it->second;
}

double XmlElement::number(const std::string& key) const {
  const std::string& text = attribute(key);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') {
    throw std::runtime_error("<" + name + "> " + key + "='" + text + "' is not a number");
  }
  return value;
}

XmlElement parse_xml(std::string_view document) {
  return Reader(document).document();
}

std::vector<const XmlElement*> find_all(const XmlElement& root,
                                        const std::function<bool(const XmlElement&)>& match) {
  std::vector<const XmlElement*> out;
  collect(root, match, out);
  return out;
}
