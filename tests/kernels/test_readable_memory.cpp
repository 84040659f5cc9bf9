// The plugin loader's view of readable memory (kernels/plugin/readable_memory.hpp):
// /proc/self/maps as the loader reads it, and what a pointer into it may be
// read as.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "kernels/plugin/readable_memory.hpp"

using namespace cfr::kernels;

namespace {

const void* at(std::uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}

}  // namespace

TEST_CASE(
    "readable memory is the maps lines whose permissions start with r, adjacent ones joined") {
  // Out of order, a write-only and a no-access mapping between, a line that is not a mapping.
  const ReadableMemory memory(
      "3000-4000 r--p 00000000 08:01 12 /lib/b.so\n"
      "1000-2000 r-xp 00000000 08:01 11 /lib/a.so\n"
      "2000-3000 rw-p 00001000 08:01 11 /lib/a.so\n"
      "5000-6000 ---p 00000000 00:00 0\n"
      "6000-7000 -w-p 00000000 00:00 0\n"
      "not a mapping\n"
      "8000-9000 r--p 00000000 00:00 0");
  CHECK(memory.holds(at(0x1000), 0x3000));  // three adjacent mappings read as one
  CHECK(memory.holds(at(0x3fff), 1));
  CHECK_FALSE(memory.holds(at(0x3fff), 2));  // one byte past the end
  CHECK_FALSE(memory.holds(at(0x5000), 1));  // mapped, but no access
  CHECK_FALSE(memory.holds(at(0x6000), 1));  // writable, not readable
  CHECK(memory.holds(at(0x8000), 0x1000));
  CHECK_FALSE(memory.holds(at(0xfff), 1));
  CHECK_FALSE(memory.holds(at(0x8000), SIZE_MAX));  // no overflow for a huge count
}

TEST_CASE("a string is read only when it starts and ends in readable memory") {
  const ReadableMemory memory = ReadableMemory::of_this_process();
  static const char text[] = "fa2_mma";
  REQUIRE(memory.c_string(text).has_value());
  CHECK(*memory.c_string(text) == "fa2_mma");
  const std::vector<int> local(4, 7);
  CHECK(memory.holds(local.data(), 4 * sizeof(int)));
  CHECK_FALSE(memory.c_string(static_cast<const char*>(at(16))).has_value());
  CHECK_FALSE(memory.holds(at(16), 1));

  // Bytes with no NUL before the end of their mapping are no string.
  const char unterminated[5] = {'a', 'b', 'c', 'd', '\0'};
  const auto address = reinterpret_cast<std::uintptr_t>(unterminated);
  const ReadableMemory four_bytes(fmt::format("{:x}-{:x} r--p 0 0:0 0\n", address, address + 4));
  CHECK_FALSE(four_bytes.c_string(unterminated).has_value());
  const ReadableMemory five_bytes(fmt::format("{:x}-{:x} r--p 0 0:0 0\n", address, address + 5));
  CHECK(five_bytes.c_string(unterminated) == "abcd");
}
