#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "roofline/core/axis_values.hpp"

using namespace cfr;
using Values = std::vector<std::int64_t>;

TEST_CASE("axis lists, geometric and arithmetic ranges, and mixes") {
  CHECK(parse_axis_values("1024,2048", "--seq-lens") == Values{1024, 2048});
  CHECK(parse_axis_values("1024:16384:x2", "--seq-lens") == Values{1024, 2048, 4096, 8192, 16384});
  CHECK(parse_axis_values("64:256:+64", "n") == Values{64, 128, 192, 256});
  CHECK(parse_axis_values("17,100:300:x3", "n") == Values{17, 100, 300});
  CHECK(parse_axis_values("5:5:x2", "n") == Values{5});
}

TEST_CASE("bad axis values fail with a message naming the value") {
  auto message = [](const char* text) {
    try {
      parse_axis_values(text, "--seq-lens");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("0") == "--seq-lens: 0 must be positive");
  CHECK(message("-5") == "--seq-lens: -5 must be positive");
  CHECK(message("abc") == "--seq-lens: 'abc' is not an integer (in 'abc')");
  CHECK(message("1:2:3:4") ==
        "--seq-lens: malformed range '1:2:3:4' (expected START:END, START:END:+STEP or "
        "START:END:xFACTOR)");
  CHECK(message("1024:512:x2") == "--seq-lens: range '1024:512:x2' ends before it starts");
  CHECK(message("1:8:y2") == "--seq-lens: malformed step 'y2' in '1:8:y2' (use x2 or +64)");
  CHECK(message("1:8:x1") == "--seq-lens: factor in '1:8:x1' must be at least 2");
  CHECK(message("1024,,2048") == "--seq-lens: empty item in '1024,,2048'");
  CHECK(message("") == "--seq-lens: empty list");
  CHECK(message("1:100000000:+1") == "--seq-lens: '1:100000000:+1' makes more than 100000 values");
  CHECK(message("[pow2]63") ==
        "--seq-lens: 2^63 in '[pow2]63' is out of the 64-bit range (largest: 2^62)");
  CHECK(
      message("99999999999999999999") ==
      "--seq-lens: '99999999999999999999' is out of the 64-bit range (in '99999999999999999999')");
}

TEST_CASE(
    "axis ranges in nvbench's forms: no step is +1, [pow2] takes exponents, spaces around items") {
  CHECK(parse_axis_values("1:4", "n") == Values{1, 2, 3, 4});
  CHECK(parse_axis_values("[pow2]10:12", "n") == Values{1024, 2048, 4096});
  CHECK(parse_axis_values("[pow2]0", "n") == Values{1});
  CHECK(parse_axis_values(" 64 , 1:2 ", "n") == Values{64, 1, 2});
}

TEST_CASE("axis ranges stop before their next value leaves 64 bits, never wrap") {
  // 1, 2, 4, ..., 2^62: the next, 2^63, is not an int64.
  const Values powers = parse_axis_values("1:9223372036854775807:x2", "n");
  REQUIRE(powers.size() == 63);
  CHECK(powers.back() == std::int64_t{1} << 62);
  CHECK(parse_axis_values("9223372036854775806:9223372036854775807:+5", "n") ==
        Values{9223372036854775806});
  CHECK(parse_axis_values("9223372036854775800:9223372036854775807", "n").size() == 8);
}
