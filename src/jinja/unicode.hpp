// Small UTF-8 helpers the lexer and the output tracker need (code points, Python's
// whitespace set). Invalid UTF-8 decodes byte by byte as U+FFFD-like units of one
// byte so that counting never runs past the end.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "util/utf8.hpp"

namespace chatwire::jinja::utf8 {

// The decoder shared with the value component, so that templates and string methods
// split invalid UTF-8 the same way (each bad byte is one code point of its own value).
using util::utf8::append;
using util::utf8::decode;

// Number of code points (continuation bytes are not counted).
inline std::size_t length(std::string_view s) {
  // Code points = bytes that are not continuation bytes (10xxxxxx). The generation
  // tracker counts the whole top-level output this way, so it is vectorised.
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

// Python's str.isspace() / regex \s set.
inline bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Byte length of `s` without its trailing Python whitespace (str.rstrip()).
inline std::size_t rstrip_length(std::string_view s) {
  std::size_t pos = 0, keep = 0;
  while (pos < s.size()) {
    char32_t c = decode(s, pos);
    if (!is_space(c)) keep = pos;
  }
  return keep;
}

// str.strip() of `s` when both ends it stops at are ASCII (nearly always): the kept
// bytes as a view; false when a non-ASCII character decides an end (the caller then
// strips the general way).
inline bool ascii_strip(std::string_view s, std::string_view& kept) {
  auto space = [](unsigned char c) { return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20); };
  std::size_t begin = 0, end = s.size();
  while (begin < end && space(static_cast<unsigned char>(s[begin]))) ++begin;
  if (begin < end && static_cast<unsigned char>(s[begin]) >= 0x80) return false;
  while (end > begin && space(static_cast<unsigned char>(s[end - 1]))) --end;
  if (end > begin && static_cast<unsigned char>(s[end - 1]) >= 0x80) return false;
  kept = s.substr(begin, end - begin);
  return true;
}

// True when `s` is non-empty and all Python whitespace (re.fullmatch(r"\s+", s)).
inline bool all_space(std::string_view s) {
  if (s.empty()) return false;
  std::size_t pos = 0;
  while (pos < s.size())
    if (!is_space(decode(s, pos))) return false;
  return true;
}

// Byte length of the whitespace prefix of `s` (what regex \s* matches).
inline std::size_t space_prefix(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t next = pos;
    if (!is_space(decode(s, next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace chatwire::jinja::utf8
