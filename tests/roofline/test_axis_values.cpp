#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "roofline/axis_values.hpp"

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
  CHECK(message("1024:16384") ==
        "--seq-lens: malformed range '1024:16384' (expected START:END:xFACTOR or START:END:+STEP)");
  CHECK(message("1024:512:x2") == "--seq-lens: range '1024:512:x2' ends before it starts");
  CHECK(message("1:8:y2") == "--seq-lens: malformed step 'y2' in '1:8:y2' (use x2 or +64)");
  CHECK(message("1:8:x1") == "--seq-lens: factor in '1:8:x1' must be at least 2");
  CHECK(message("1024,,2048") == "--seq-lens: empty item in '1024,,2048'");
  CHECK(message("") == "--seq-lens: empty list");
  CHECK(message("1:100000000:+1") == "--seq-lens: range '1:100000000:+1' has too many values");
}
