// Pins parse_device_list, the parser of --devices (kernels/measure/device_selection.hpp):
// the messages are the ones a user sees.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/measure/device_selection.hpp"

using cfr::measure::parse_device_list;

namespace {

std::string message_of(std::string_view spec, int device_count) {
  try {
    parse_device_list(spec, device_count);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no exception)";
}

}  // namespace

TEST_CASE("parse_device_list keeps the listed ids in order", "[device_selection]") {
  CHECK(parse_device_list("0", 1) == std::vector<int>{0});
  CHECK(parse_device_list("0,1", 2) == std::vector<int>{0, 1});
  CHECK(parse_device_list("3,1", 4) == std::vector<int>{3, 1});
  CHECK(parse_device_list(" 2 , 0 ", 4) == std::vector<int>{2, 0});
}

TEST_CASE("parse_device_list expands all to every device", "[device_selection]") {
  CHECK(parse_device_list("all", 1) == std::vector<int>{0});
  CHECK(parse_device_list("all", 4) == std::vector<int>{0, 1, 2, 3});
  CHECK(message_of("all", 0) == "--devices all: this machine has no CUDA device");
}

TEST_CASE("parse_device_list names an id that does not exist", "[device_selection]") {
  CHECK(message_of("3", 1) == "device 3 does not exist (this machine has 1 CUDA device)");
  CHECK(message_of("0,2", 2) == "device 2 does not exist (this machine has 2 CUDA devices)");
  CHECK(message_of("0", 0) == "device 0 does not exist (this machine has no CUDA device)");
  CHECK(message_of("-1", 2) == "device -1 does not exist (this machine has 2 CUDA devices)");
}

TEST_CASE("parse_device_list rejects a device listed twice", "[device_selection]") {
  CHECK(message_of("0,0", 2) == "device 0 is listed twice in --devices \"0,0\"");
  CHECK(message_of("1,0,1", 2) == "device 1 is listed twice in --devices \"1,0,1\"");
}

TEST_CASE("parse_device_list rejects garbage in one line", "[device_selection]") {
  for (const char* spec : {"", " ", "0,", ",0", "0,,1", "a", "1x", "0.5", "all,0", "ALL", "0;1"}) {
    INFO("spec: \"" << spec << "\"");
    const std::string message = message_of(spec, 2);
    CHECK(message != "(no exception)");
    CHECK(message.find('\n') == std::string::npos);
  }
  CHECK(message_of("0,x", 2) ==
        "invalid device id \"x\" in --devices \"0,x\" (expected a list such as 0,1 or all)");
}

TEST_CASE("parse_device_list refuses an id beyond int instead of truncating it",
          "[device_selection]") {
  // Issue 12: a device index of 2^32 read as 0 would pass for device 0.
  CHECK(message_of("4294967296", 2) ==
        "invalid device id \"4294967296\" in --devices \"4294967296\" (expected a list such as "
        "0,1 or all)");
  CHECK(message_of("0,99999999999999999999", 2).starts_with("invalid device id"));
}

TEST_CASE("check_device_list holds the grammar without a machine to check against",
          "[device_selection]") {
  // Without a GPU `sweep` falls back to the model, but `--devices abc` is still a typo.
  using cfr::measure::check_device_list;
  CHECK_NOTHROW(check_device_list("all"));
  CHECK_NOTHROW(check_device_list("0,7"));
  CHECK_THROWS_WITH(check_device_list("abc"),
                    "invalid device id \"abc\" in --devices \"abc\" (expected a list such as 0,1 "
                    "or all)");
  CHECK_THROWS_WITH(check_device_list("-1"),
                    "invalid device id \"-1\" in --devices \"-1\" (a device index is 0 or more)");
  CHECK_THROWS_WITH(check_device_list("0,0"), "device 0 is listed twice in --devices \"0,0\"");
  CHECK_THROWS_WITH(check_device_list(","), Catch::Contains("has an empty item"));
}
