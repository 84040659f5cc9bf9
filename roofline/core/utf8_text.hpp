#pragma once

// Text from the command line and from files is bytes, not necessarily UTF-8;
// JSON and XML can hold only UTF-8. One decoder for both writers.

#include <cstddef>
#include <string>
#include <string_view>

namespace cfr {

struct Utf8Sequence {
  std::size_t length = 0;  // 0: not a valid sequence
  char32_t code = 0;
};

// The valid UTF-8 sequence starting at text[i] (overlong forms, surrogates and
// code points beyond U+10FFFF are not valid), or length 0.
Utf8Sequence decode_utf8(std::string_view text, std::size_t i);

// The text with every byte that is not part of valid UTF-8 written as the four
// characters \xNN, so that the bytes can still be read back from a JSON string.
std::string escape_invalid_utf8(std::string_view text);

}  // namespace cfr
