#include <catch2/catch.hpp>

#include <string>

#include "roofline/core/strict_json.hpp"

using namespace cfr;

namespace {

// The one-line refusal, or "parsed".
std::string refusal(const std::string& text) {
  try {
    parse_strict_json(text);
  } catch (const InputError& error) {
    return error.what();
  }
  return "parsed";
}

}  // namespace

TEST_CASE("strict JSON builds the same document as nlohmann's parser") {
  const std::string text =
      R"({"a": [1, -2, 3.5, "x", null, true, {"b": []}], "c": {"d": {"e": 18446744073709551615}}})";
  CHECK(parse_strict_json(text) == nlohmann::json::parse(text));
  CHECK(parse_strict_json("7") == 7);
  CHECK(parse_strict_json("[]") == nlohmann::json::array());
}

TEST_CASE("a repeated key is refused with the path of its object") {
  // Issue 12: nlohmann keeps the last of two equal keys, so a second
  // "auditable": true could override the first.
  CHECK(refusal(R"({"a": 1, "a": 2})") ==
        "(top level): key 'a' appears twice in one object (a reader would keep only one)");
  CHECK(refusal(R"({"p": {"auditable": false, "x": 1, "auditable": true}})")
            .starts_with("p: key 'auditable' appears twice"));
  CHECK(
      refusal(R"({"r": [{"k": 1}, {"k": 1, "k": 2}]})").starts_with("r[1]: key 'k' appears twice"));
  // The same key in two objects is fine.
  CHECK(refusal(R"({"r": [{"k": 1}, {"k": 2}], "k": 3})") == "parsed");
}

TEST_CASE("a number beyond double range is refused with its key path") {
  // Issue 12: it surfaced as "[json.exception.out_of_range.406] ..." without the key.
  CHECK(refusal(R"({"t": {"median_ms": 1e400}})") ==
        "t.median_ms: number 1e400 is outside the range of a double");
  CHECK(refusal(R"({"s": [1, 2, -1e999]})") ==
        "s[2]: number -1e999 is outside the range of a double");
  CHECK(refusal("[[1], [2, 1e309]]") == "[1][1]: number 1e309 is outside the range of a double");
  CHECK(refusal("1e-400") == "parsed");  // underflows to 0: a value, if a wrong one
}

TEST_CASE("nesting beyond max_json_depth is refused; text that is not JSON says where") {
  CHECK(refusal(std::string(64, '[') + std::string(64, ']')) == "parsed");
  CHECK(refusal(std::string(65, '[') + std::string(65, ']'))
            .ends_with("nested deeper than 64 levels"));
  CHECK(refusal(std::string(1000000, '[')).ends_with("nested deeper than 64 levels"));
  CHECK(refusal(R"({"a": 1,)") == "not valid JSON (byte 9)");
  CHECK(refusal("") == "not valid JSON (byte 1)");
  CHECK(refusal("{} {}") == "not valid JSON (byte 4)");
}

TEST_CASE("a NUL byte is not the end of the text: bytes after the JSON value are an error") {
  // Issue 21: nlohmann's lexer stops at a NUL, so a report followed by a NUL
  // and more bytes was read as the part before the NUL, and audited clean.
  using namespace std::string_literals;
  CHECK(refusal("{}\0{\"x\": 1}"s) == "not valid JSON (byte 3: a NUL byte)");
  CHECK(refusal("[1]\0"s) == "not valid JSON (byte 4: a NUL byte)");
  CHECK(refusal("\"a\0b\""s) == "not valid JSON (byte 3: a NUL byte)");
  CHECK(refusal("{}\n"s) == "parsed");
}
