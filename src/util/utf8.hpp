// The UTF-8 encoder, the lenient decoder, the strict validator and the code point counter that
// several components need. They live in one header, inline, rather than in a library: parse and
// tokenize link no library of ours, and the jinja lexer and the value string methods call
// them per character.
// Stricter or differently lenient decoders (tokenize's, which maps invalid bytes to
// U+FFFD and rejects overlongs and surrogates) stay with the component that needs them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Where the character holding byte `at` starts (`at` itself where a character starts, and at the
// end): a text cut there splits no character, as a shortened excerpt must not.
inline std::size_t char_start(std::string_view s, std::size_t at) noexcept {
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

// Length of `s` without a trailing incomplete UTF-8 sequence, so that text streamed in pieces
// never splits a character between two of them.
inline std::size_t complete_prefix(std::string_view s) noexcept {
  std::size_t n = s.size();
  std::size_t back = 0;
  while (back < 3 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == n) return n;
  unsigned char lead = static_cast<unsigned char>(s[n - 1 - back]);
  std::size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return need > back + 1 ? n - 1 - back : n;
}

// Number of code points: the bytes that are not continuation bytes (10xxxxxx), so a
// stray continuation byte is not counted.
inline std::size_t code_points(std::string_view s) noexcept {
  // Vectorised: the generation tracker counts the whole top-level output, and every
  // non-ASCII string a render builds is counted once.
  std::size_t n = 0, i = 0;
#if defined(__SSE2__)
  // 16 bytes per step: continuation bytes are the signed bytes below -64 (0xC0). Each
  // step subtracts the compare's -1 from a byte counter, summed every 255 steps.
  const __m128i limit = _mm_set1_epi8(static_cast<char>(0xC0));
  while (i + 16 <= s.size()) {
    __m128i counts = _mm_setzero_si128();
    const std::size_t steps = std::min<std::size_t>((s.size() - i) / 16, 255);
    for (std::size_t k = 0; k < steps; ++k, i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      counts = _mm_sub_epi8(counts, _mm_cmplt_epi8(bytes, limit));
    }
    const __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
    const std::size_t continuation = static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
                                     static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
    n += steps * 16 - continuation;
  }
#endif
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    const std::uint64_t continuation = w & ~(w << 1) & 0x8080808080808080ull;
    // One bit per continuation byte, summed by a multiply (std::popcount is a libgcc
    // call on baseline x86-64, which has no POPCNT instruction).
    n += 8 - static_cast<std::size_t>(((continuation >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (; i < s.size(); ++i) n += (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
  return n;
}

// Offset of the first byte that does not start a strictly valid UTF-8 sequence (an overlong
// form, a surrogate, a code point above U+10FFFF, a stray or missing continuation byte), or
// s.size() when all of s is valid. Request lines and tokenizer inputs are checked whole before
// they are parsed, so ASCII goes 16 bytes per step (8 without SSE2) and only the sequences
// themselves are looked at byte by byte.
inline std::size_t first_invalid(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
#if defined(__SSE2__)
    while (i + 16 <= n) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const unsigned high = static_cast<unsigned>(_mm_movemask_epi8(bytes));
      if (high != 0) {
        i += static_cast<std::size_t>(__builtin_ctz(high));
        break;
      }
      i += 16;
    }
#endif
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, p + i, 8);
      const std::uint64_t high = w & 0x8080808080808080ull;
      if (high != 0) {
        i += static_cast<std::size_t>(__builtin_ctzll(high)) / 8;
        break;
      }
      i += 8;
    }
    if (i >= n) break;
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlongs
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;  // <= U+10FFFF
    }
    if (len == 0 || i + len > n || p[i + 1] < lo || p[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return n;
}

}  // namespace chatwire::util::utf8
