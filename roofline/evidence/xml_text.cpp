#include "xml_text.hpp"

#include "roofline/core/utf8_text.hpp"

namespace cfr::evidence {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default: out += (u < 0x20 && c != '\t' && c != '\n' && c != '\r') ? '?' : c;
      }
      ++i;
      continue;
    }
    // XML excludes the two non-characters U+FFFE and U+FFFF besides invalid UTF-8.
    const Utf8Sequence sequence = decode_utf8(text, i);
    if (sequence.length == 0 || sequence.code == 0xFFFE || sequence.code == 0xFFFF) {
      out += '?';
      ++i;
    } else {
      out.append(text.substr(i, sequence.length));
      i += sequence.length;
    }
  }
  return out;
}

}  // namespace cfr::evidence
