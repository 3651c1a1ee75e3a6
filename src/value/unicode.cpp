// Python's per-code-point string predicates and case mappings. Properties that
// utf8proc does not expose (Python's isdigit/isnumeric/isspace/isprintable sets,
// Other_Lowercase, multi-character SpecialCasing) come from tables generated from
// Python itself (unicode_tables.inc); simple case mappings come from utf8proc.
#include <utf8proc.h>

#include <algorithm>

#include "value/internal.hpp"

namespace chatwire::unicode {

namespace {

struct Range {
  char32_t first, last;
};

struct SpecialCase {
  char32_t code_point;
  const char* upper;
  const char* lower;
  const char* title;
  const char* casefold;
};

#include "value/unicode_tables.inc"

template <std::size_t N>
bool in_ranges(const Range (&table)[N], char32_t c) noexcept {
  auto it = std::upper_bound(std::begin(table), std::end(table), c,
                             [](char32_t v, const Range& r) { return v < r.first; });
  if (it == std::begin(table)) return false;
  --it;
  return c <= it->last;
}

const SpecialCase* find_special(char32_t c) noexcept {
  auto it = std::lower_bound(std::begin(kSpecialCases), std::end(kSpecialCases), c,
                             [](const SpecialCase& s, char32_t v) { return s.code_point < v; });
  if (it == std::end(kSpecialCases) || it->code_point != c) return nullptr;
  return it;
}

utf8proc_category_t category(char32_t c) noexcept {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

void append_mapped(std::string& out, char32_t c, const char* special, utf8proc_int32_t simple) {
  (void)c;
  if (special) {
    out += special;
  } else {
    utf8::encode(out, static_cast<char32_t>(simple));
  }
}

}  // namespace

bool is_space(char32_t c) noexcept {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return in_ranges(kSpace, c);
}
bool is_printable(char32_t c) noexcept {
  if (c < 0x80) return c >= 0x20 && c < 0x7F;
  return in_ranges(kPrintable, c);
}
bool is_linebreak(char32_t c) noexcept {
  return in_ranges(kLinebreak, c);
}
bool is_alpha(char32_t c) noexcept {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return in_ranges(kAlpha, c);
}
bool is_decimal(char32_t c) noexcept {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kDecimal, c);
}
bool is_digit(char32_t c) noexcept {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kDigit, c);
}
bool is_numeric(char32_t c) noexcept {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kNumeric, c);
}
bool is_lower(char32_t c) noexcept {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  return category(c) == UTF8PROC_CATEGORY_LL || in_ranges(kOtherLowercase, c);
}
bool is_upper(char32_t c) noexcept {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  return category(c) == UTF8PROC_CATEGORY_LU || in_ranges(kOtherUppercase, c);
}
bool is_title(char32_t c) noexcept {
  return c >= 0x80 && category(c) == UTF8PROC_CATEGORY_LT;
}
bool is_cased(char32_t c) noexcept {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return in_ranges(kCased, c);
}
bool is_case_ignorable(char32_t c) noexcept {
  // Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk plus Word_Break MidLetter/MidNumLet/
  // Single_Quote characters.
  switch (c) {
    case '\'':
    case '.':
    case ':':
    case '^':
    case '`':
    case 0xA8:
    case 0xAD:
    case 0xAF:
    case 0xB4:
    case 0xB7:
    case 0xB8:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
      return true;
    default:
      break;
  }
  if (c < 0x80) return false;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      return false;
  }
}
bool is_xid_start(char32_t c) noexcept {
  if (c < 0x80) return c == '_' || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  return in_ranges(kXidStart, c);
}
bool is_xid_continue(char32_t c) noexcept {
  if (c < 0x80)
    return c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
  return in_ranges(kXidContinue, c);
}

void append_upper(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return;
  }
  const SpecialCase* s = find_special(c);
  append_mapped(out, c, s ? s->upper : nullptr, utf8proc_toupper(static_cast<utf8proc_int32_t>(c)));
}
void append_lower(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  const SpecialCase* s = find_special(c);
  append_mapped(out, c, s ? s->lower : nullptr, utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}
void append_title(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return;
  }
  const SpecialCase* s = find_special(c);
  append_mapped(out, c, s ? s->title : nullptr, utf8proc_totitle(static_cast<utf8proc_int32_t>(c)));
}
void append_casefold(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  const SpecialCase* s = find_special(c);
  append_mapped(out, c, s ? s->casefold : nullptr,
                utf8proc_tolower(static_cast<utf8proc_int32_t>(c)));
}

}  // namespace chatwire::unicode
