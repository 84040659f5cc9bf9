#include <catch2/catch.hpp>

#include "roofline/evidence/xml_text.hpp"

using namespace cfr::evidence;

TEST_CASE("the five XML special characters are escaped") {
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("fa1_wmma") == "fa1_wmma");
}

TEST_CASE("what XML 1.0 cannot hold becomes '?', valid UTF-8 passes") {
  CHECK(xml_escape(std::string("a\x01"
                               "b\x1f",
                               4)) == "a?b?");
  CHECK(xml_escape("tab\tnew\nline") == "tab\tnew\nline");
  CHECK(xml_escape("§5.1 有效带宽") == "§5.1 有效带宽");
  CHECK(xml_escape("\xff\xfe") == "??");
  CHECK(xml_escape("\xe6\x9c") == "??");       // truncated 3-byte sequence
  CHECK(xml_escape("\xc0\xaf") == "??");       // overlong '/'
  CHECK(xml_escape("\xed\xa0\x80") == "???");  // a UTF-16 surrogate
}
