// The UTF-8 encoder and the lenient decoder that several components need. They live in
// one header, inline, rather than in a library: parse and tokenize link no library of
// ours, and the jinja lexer and the value string methods call them per character.
// Stricter or differently lenient decoders (tokenize's, which maps invalid bytes to
// U+FFFD and rejects overlongs and surrogates) stay with the component that needs them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace chatwire::util::utf8 {

// Appends the UTF-8 bytes of `cp`. Surrogates are encoded like any other code point
// (WTF-8), as Python strings may hold them; values above U+10FFFF are not checked.
inline void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes the code point starting at s[i] (i < s.size()) and advances i past it. Only
// the lead byte and the continuation bytes are checked, so overlongs and surrogates
// (WTF-8) decode as written. A byte that starts no complete sequence decodes as its own
// value (U+0080..U+00FF) and advances i by one, so iteration always terminates and byte
// offsets stay exact.
inline char32_t decode(std::string_view s, std::size_t& i) noexcept {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  if (extra == 0 || i + static_cast<std::size_t>(extra) >= s.size()) {
    ++i;
    return c;
  }
  char32_t cp = c & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) {
      ++i;
      return c;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  i += extra + 1;
  return cp;
}

}  // namespace chatwire::util::utf8
