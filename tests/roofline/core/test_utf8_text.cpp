#include <catch2/catch.hpp>

#include "roofline/core/utf8_text.hpp"

using namespace cfr;

TEST_CASE("escape_invalid_utf8 keeps valid UTF-8 and writes every other byte as \\xNN") {
  CHECK(escape_invalid_utf8("plain ascii") == "plain ascii");
  CHECK(escape_invalid_utf8("µs ≤ 2 ✓") == "µs ≤ 2 ✓");
  CHECK(escape_invalid_utf8("r\xff\xfe.json") == "r\\xFF\\xFE.json");
  CHECK(escape_invalid_utf8("\xc3\x28") == "\\xC3(");                        // truncated sequence
  CHECK(escape_invalid_utf8("\xc0\xaf") == "\\xC0\\xAF");                    // overlong '/'
  CHECK(escape_invalid_utf8("\xed\xa0\x80") == "\\xED\\xA0\\x80");           // a surrogate
  CHECK(escape_invalid_utf8("\xf4\x90\x80\x80") == "\\xF4\\x90\\x80\\x80");  // beyond U+10FFFF
}

TEST_CASE("decode_utf8 gives the code point and length of one sequence") {
  CHECK(decode_utf8("A", 0).code == U'A');
  CHECK(decode_utf8("\xe2\x9c\x93", 0).length == 3);
  CHECK(decode_utf8("\xe2\x9c\x93", 0).code == U'✓');
  CHECK(decode_utf8("\xe2\x9c", 0).length == 0);
}
