// Unicode facts the tokenizer needs, from our own Unicode 16 tables (see unicode_tables.inc):
// general categories, White_Space, UTF-8 decoding, and the code point ranges of a class (used to
// rewrite \p{..}/\s in regexes so that PCRE2 agrees with HF's Oniguruma).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chatwire::tokenize::unicode {

enum GeneralCategory : std::uint8_t {
  kCn,
  kLu,
  kLl,
  kLt,
  kLm,
  kLo,
  kMn,
  kMc,
  kMe,
  kNd,
  kNl,
  kNo,
  kPc,
  kPd,
  kPs,
  kPe,
  kPi,
  kPf,
  kPo,
  kSm,
  kSc,
  kSk,
  kSo,
  kZs,
  kZl,
  kZp,
  kCc,
  kCf,
  kCs,
  kCo,
};

extern const unsigned short* const kStage1;
extern const unsigned char (*const kStage2)[256];

inline std::uint8_t raw_properties(char32_t cp) {
  if (cp > 0x10FFFF) return kCn;
  return kStage2[kStage1[cp >> 8]][cp & 0xFF];
}
inline GeneralCategory category(char32_t cp) {
  return static_cast<GeneralCategory>(raw_properties(cp) & 0x1F);
}
inline bool is_white_space(char32_t cp) {
  return (raw_properties(cp) & 0x80) != 0;
}
inline bool is_alphabetic(char32_t cp) {
  return (raw_properties(cp) & 0x40) != 0;
}
// Whether general category c lies in [first, last]: the categories of each major class (L, M, N,
// P, S) are consecutive in GeneralCategory.
constexpr bool in_categories(unsigned c, GeneralCategory first, GeneralCategory last) {
  return c >= first && c <= last;
}
inline bool is_letter(char32_t cp) {
  return in_categories(category(cp), kLu, kLo);
}
inline bool is_mark(char32_t cp) {
  return in_categories(category(cp), kMn, kMe);
}
inline bool is_number(char32_t cp) {
  return in_categories(category(cp), kNd, kNo);
}
inline bool is_punctuation(char32_t cp) {
  return in_categories(category(cp), kPc, kPo);
}
inline bool is_symbol(char32_t cp) {
  return in_categories(category(cp), kSm, kSo);
}
// The "word character" test of HF's single_word added tokens: the Rust regex crate's Unicode
// `\w` (its `\b` decides), that is Alphabetic, a mark (Mn, Mc, Me), a decimal digit (Nd), a
// connector (Pc, '_' among them) or Join_Control (ZWNJ, ZWJ); not other numbers (², ½).
inline bool is_word_char(char32_t cp) {
  const unsigned c = category(cp);
  return is_alphabetic(cp) || in_categories(c, kMn, kMe) || c == kNd || c == kPc || cp == 0x200C ||
         cp == 0x200D;
}

// Decodes one UTF-8 character at s[i] (i < n). Invalid bytes decode as themselves (as U+FFFD would
// be wrong for offsets): returns the code point and sets len to the bytes consumed (>= 1).
inline char32_t decode_utf8(const unsigned char* s, std::size_t n, std::size_t i,
                            std::size_t& len) {
  unsigned char b = s[i];
  if (b < 0x80) {
    len = 1;
    return b;
  }
  if (b >= 0xC2 && b < 0xE0 && i + 1 < n && (s[i + 1] & 0xC0) == 0x80) {
    len = 2;
    return (char32_t(b & 0x1F) << 6) | (s[i + 1] & 0x3F);
  }
  if (b >= 0xE0 && b < 0xF0 && i + 2 < n && (s[i + 1] & 0xC0) == 0x80 &&
      (s[i + 2] & 0xC0) == 0x80) {
    char32_t cp = (char32_t(b & 0x0F) << 12) | (char32_t(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
      len = 3;
      return cp;
    }
  }
  if (b >= 0xF0 && b < 0xF5 && i + 3 < n && (s[i + 1] & 0xC0) == 0x80 &&
      (s[i + 2] & 0xC0) == 0x80 && (s[i + 3] & 0xC0) == 0x80) {
    char32_t cp = (char32_t(b & 0x07) << 18) | (char32_t(s[i + 1] & 0x3F) << 12) |
                  (char32_t(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      len = 4;
      return cp;
    }
  }
  len = 1;
  return 0xFFFD;
}
inline char32_t decode_utf8(std::string_view s, std::size_t i, std::size_t& len) {
  return decode_utf8(reinterpret_cast<const unsigned char*>(s.data()), s.size(), i, len);
}
inline std::size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}
void append_utf8(std::string& out, char32_t cp);
// True when s is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);
// Length of the longest prefix of s that ends on a character boundary of valid UTF-8 text.
std::size_t complete_utf8_prefix(std::string_view s);

// Code point ranges [first, last] of a regex class name as Oniguruma understands it: "L", "Lu",
// "N", "P", "S", "M", "Z", "C" and their two-letter forms, "White_Space", "digit" (\d), "word"
// (\w). Empty when the name is unknown.
std::vector<std::pair<char32_t, char32_t>> class_ranges(std::string_view name);

}  // namespace chatwire::tokenize::unicode
