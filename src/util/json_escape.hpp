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
#if defined(__x86_64__) && defined(__GNUC__)
#define CHATWIRE_JSON_ESCAPE_SSSE3 1  // built in, chosen at run time (has_ssse3)
#include <tmmintrin.h>
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

namespace json_escape_detail {

// The escape of text[at, n) one byte at a time into dst; returns the end of what it wrote.
inline char* escape_bytes(char* dst, const char* p, std::size_t at, std::size_t n) {
  for (; at < n; ++at) {
    const JsonEscape& e = kJsonEscapes.of[static_cast<unsigned char>(p[at])];
    if (e.size == 0) {
      *dst++ = p[at];
      continue;
    }
    std::memcpy(dst, e.text, 8);
    dst += e.size;
  }
  return dst;
}

#if defined(__SSE2__)
// The lanes of v whose byte is below `limit` as unsigned: (v xor 0x80) < (limit xor 0x80) as
// signed bytes.
inline __m128i bytes_below(__m128i v, unsigned char limit) {
  const __m128i flipped = _mm_xor_si128(v, _mm_set1_epi8(static_cast<char>(0x80)));
  return _mm_cmplt_epi8(flipped, _mm_set1_epi8(static_cast<char>(limit ^ 0x80)));
}

// The bytes of a 16-byte block that JSON escapes: below 0x20, '"' and '\\'.
inline unsigned escaped_bytes(__m128i v) {
  __m128i hit = bytes_below(v, 0x20);
  hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  return static_cast<unsigned>(_mm_movemask_epi8(hit));
}

// A block with escapes, an escape at a time: the plain bytes before each as one 16-byte copy,
// then the escape as one 8-byte copy. Returns the bytes of the block consumed (up to and
// including its last escape); the rest is read again with the next load.
inline std::size_t escape_block_scalar(char*& dst, const char* p, std::size_t at, std::size_t n,
                                       unsigned mask) {
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
  return done;
}
#endif

#if defined(CHATWIRE_JSON_ESCAPE_SSSE3)
// For each set of escaped bytes among 8 (bit i: byte i), the shuffle that writes the 8 bytes
// with a backslash before each escaped one (index i takes byte i, index 8 a backslash), and the
// bytes it writes (a table: without POPCNT, std::popcount is a call).
struct ExpandTable {
  alignas(16) unsigned char of[256][16];
  unsigned char size[256];
  constexpr ExpandTable() : of{}, size{} {
    for (int m = 0; m < 256; ++m) {
      int j = 0;
      for (int i = 0; i < 8; ++i) {
        if (m & (1 << i)) of[m][j++] = 8;
        of[m][j++] = static_cast<unsigned char>(i);
      }
      size[m] = static_cast<unsigned char>(j);
    }
  }
};
inline constexpr ExpandTable kExpand;

// escape_json_into with SSSE3's byte shuffle: a block whose escapes are all two bytes long
// (quote, backslash, \b \t \n \f \r: code and JSON text, where they come every few bytes) is
// written as two shuffles of its bytes, each 8 bytes with a backslash inserted before each
// escaped one, without a branch per escape. A block with a \u00xx escape goes the scalar way.
__attribute__((target("ssse3"))) inline std::size_t escape_json_ssse3(char* dst,
                                                                      std::string_view text) {
  const std::size_t n = text.size();
  const char* p = text.data();
  char* const start = dst;
  std::size_t at = 0;
  // The letter of each short control escape by its byte (8..13), 0 for the other bytes < 16.
  const __m128i letters = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0);
  const __m128i backslashes = _mm_set1_epi8('\\');
  while (at + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    const unsigned mask = escaped_bytes(v);
    if (mask == 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
      at += 16;
      dst += 16;
      continue;
    }
    // Control bytes (< 0x20) take their letter; one without a letter needs \u00xx.
    const __m128i control = bytes_below(v, 0x20);
    const __m128i letter = _mm_and_si128(_mm_shuffle_epi8(letters, v), bytes_below(v, 0x10));
    const __m128i lettered = _mm_andnot_si128(_mm_cmpeq_epi8(letter, _mm_setzero_si128()), control);
    if (static_cast<unsigned>(_mm_movemask_epi8(_mm_xor_si128(control, lettered))) != 0) {
      at += escape_block_scalar(dst, p, at, n, mask);
      continue;
    }
    // Each byte as it follows its backslash: the letter for a control byte, else itself.
    const __m128i written = _mm_or_si128(_mm_andnot_si128(control, v), letter);
    const unsigned low = mask & 0xFF, high = mask >> 8;
    const __m128i low_bytes = _mm_unpacklo_epi64(written, backslashes);
    const __m128i high_bytes = _mm_unpackhi_epi64(written, backslashes);
    const auto shuffle_of = [](unsigned m) {
      return _mm_load_si128(reinterpret_cast<const __m128i*>(kExpand.of[m]));
    };
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm_shuffle_epi8(low_bytes, shuffle_of(low)));
    dst += kExpand.size[low];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                     _mm_shuffle_epi8(high_bytes, shuffle_of(high)));
    dst += kExpand.size[high];
    at += 16;
  }
  return static_cast<std::size_t>(escape_bytes(dst, p, at, n) - start);
}

inline bool has_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
}
#endif

// escape_json_into without SSSE3: a block with escapes is handled an escape at a time from its
// one load.
inline std::size_t escape_json_sse2(char* dst, std::string_view text) {
  const std::size_t n = text.size();
  const char* p = text.data();
  char* const start = dst;
  std::size_t at = 0;
#if defined(__SSE2__)
  while (at + 16 <= n) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
    const unsigned mask = escaped_bytes(v);
    if (mask == 0) {
      at += 16;
      dst += 16;
      continue;
    }
    at += escape_block_scalar(dst, p, at, n, mask);
  }
#endif
  return static_cast<std::size_t>(escape_bytes(dst, p, at, n) - start);
}

}  // namespace json_escape_detail

// Writes `text` escaped (no quotes; bytes from 0x80 up as they are, as without ensure_ascii) to
// dst, which has room for its escaped size and 16 bytes more, and returns the bytes written. A
// 16-byte block without escapes is stored whole from one load; one with escapes is expanded by
// byte shuffles where the CPU has SSSE3 (every x86-64 CPU since 2006, checked once at run time),
// else handled an escape at a time from the one load.
inline std::size_t escape_json_into(char* dst, std::string_view text) {
#if defined(CHATWIRE_JSON_ESCAPE_SSSE3)
  if (json_escape_detail::has_ssse3()) return json_escape_detail::escape_json_ssse3(dst, text);
#endif
  return json_escape_detail::escape_json_sse2(dst, text);
}

}  // namespace chatwire::util
