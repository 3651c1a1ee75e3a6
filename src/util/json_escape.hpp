// The escape of each byte JSON escapes, as nlohmann and Python's json write them: short ones for
// '"', '\\', \b \f \n \r \t, \u00xx (lower-case hex) for the other bytes below 0x20. Each is 8
// bytes wide so that it is copied as one word. Header-only: the parser (argument values) and the
// command's JSON writer share it.
#pragma once

#include <cstddef>

namespace chatwire::util {

struct JsonEscape {
  char text[8];
  std::size_t size;  // 0: the byte is not escaped
};

struct JsonEscapeTable {
  JsonEscape of[256];
  constexpr JsonEscapeTable() : of{} {
    constexpr char kHex[] = "0123456789abcdef";
    for (int c = 0; c < 0x20; ++c)
      of[c] = JsonEscape{{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF], 0, 0}, 6};
    auto short_escape = [this](unsigned char c, char second) {
      of[c] = JsonEscape{{'\\', second, 0, 0, 0, 0, 0, 0}, 2};
    };
    short_escape('"', '"');
    short_escape('\\', '\\');
    short_escape('\b', 'b');
    short_escape('\f', 'f');
    short_escape('\n', 'n');
    short_escape('\r', 'r');
    short_escape('\t', 't');
  }
};
inline constexpr JsonEscapeTable kJsonEscapes;

}  // namespace chatwire::util
