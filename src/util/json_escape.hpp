// The escape of each byte JSON escapes, as nlohmann and Python's json write them: short ones for
// '"', '\\', \b \f \n \r \t, \u00xx (lower-case hex) for the other bytes below 0x20. Each is 8
// bytes wide so that it is copied as one word. Header-only: the parser (argument values) and the
// command's JSON writer share the table and the escaper below.
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Writes `text` escaped (no quotes; bytes from 0x80 up as they are, as without ensure_ascii) to
// dst, which has room for its escaped size and 16 bytes more, and returns the bytes written. A
// 16-byte block is stored whole and every escape in it handled from the one load (code and JSON
// text escape every few bytes, where an append per plain run and one per escape cost more).
inline std::size_t escape_json_into(char* dst, std::string_view text) {
  const std::size_t n = text.size();
  const char* p = text.data();
  char* const start = dst;
  std::size_t at = 0;
#if defined(__SSE2__)
  while (at + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
    // Bytes below 0x20 as unsigned: (v xor 0x80) < (0x20 xor 0x80) as signed bytes.
    const __m128i flipped = _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80)));
    __m128i hit = _mm_cmplt_epi8(flipped, _mm_set1_epi8(static_cast<char>(0x20 ^ 0x80)));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
    if (mask == 0) {
      at += 16;
      dst += 16;
      continue;
    }
    std::size_t done = 0;  // bytes of this block written so far
    for (; mask != 0; mask &= mask - 1) {
      const auto k = static_cast<std::size_t>(std::countr_zero(mask));
      if (at + done + 16 <= n)  // the plain bytes before it, as one 16-byte copy
        std::memcpy(dst, p + at + done, 16);
      else  // near the end of the input: only the bytes that are there
        std::memcpy(dst, p + at + done, k - done);
      dst += k - done;
      const JsonEscape& e = kJsonEscapes.of[static_cast<unsigned char>(p[at + k])];
      std::memcpy(dst, e.text, 8);
      dst += e.size;
      done = k + 1;
    }
    at += done;  // the rest of the block is read again with the next load
  }
#endif
  for (; at < n; ++at) {
    const JsonEscape& e = kJsonEscapes.of[static_cast<unsigned char>(p[at])];
    if (e.size == 0) {
      *dst++ = p[at];
      continue;
    }
    std::memcpy(dst, e.text, 8);
    dst += e.size;
  }
  return static_cast<std::size_t>(dst - start);
}

}  // namespace chatwire::util
