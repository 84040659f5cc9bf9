#include <string>

#include <catch2/catch.hpp>

#include "roofline/core/sha256.hpp"

// Expected digests: FIPS 180-4 examples (NIST CSRC "SHA256.pdf") and `sha256sum`.
TEST_CASE("sha256_hex matches the FIPS 180-4 examples", "[sha256]") {
  CHECK(cfr::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(cfr::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(cfr::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// 55, 56 and 64 bytes are where the padding needs one block, two blocks, and a
// whole block of data: `printf 'a%.0s' {1..N} | sha256sum`.
TEST_CASE("sha256_hex pads at the block boundaries", "[sha256]") {
  CHECK(cfr::sha256_hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(cfr::sha256_hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(cfr::sha256_hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  CHECK(cfr::sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
