// Small UTF-8 helpers the lexer and the output tracker need (code points, Python's
// whitespace set). Invalid UTF-8 decodes byte by byte as U+FFFD-like units of one
// byte so that counting never runs past the end.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "util/utf8.hpp"

namespace chatwire::jinja::utf8 {

// The decoder shared with the value component, so that templates and string methods
// split invalid UTF-8 the same way (each bad byte is one code point of its own value).
using util::utf8::append;
using util::utf8::code_points;
using util::utf8::decode;

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
