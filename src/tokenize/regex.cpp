#include "tokenize/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "tokenize/unicode.hpp"

namespace chatwire::tokenize {
namespace {

using unicode::category;
using unicode::decode_utf8;

// ---------------------------------------------------------------------------------------------
// Hand-written scanners. Each returns the length of the match at text[i] (these patterns match at
// every position, so a scan never skips bytes). They follow the regex alternation order exactly.

constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// DeepSeek V3 (the \r and \n inside are the characters themselves, as in its tokenizer.json).
constexpr std::string_view kDeepseekPattern =
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";

// Character classes of one code point, computed once per character.
enum CharClass : std::uint8_t { kLetter, kNumber, kSpace, kOther };

struct Cursor {
  const unsigned char* s;
  std::size_t n;
  // Class and length of the character at i.
  CharClass at(std::size_t i, std::size_t& len, char32_t& cp) const {
    unsigned char b = s[i];
    if (b < 0x80) {
      len = 1;
      cp = b;
      static constexpr auto kAscii = [] {
        std::array<CharClass, 128> t{};
        for (int c = 0; c < 128; ++c) {
          t[c] = kOther;
          if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) t[c] = kLetter;
          if (c >= '0' && c <= '9') t[c] = kNumber;
          if (c == ' ' || (c >= 9 && c <= 13)) t[c] = kSpace;
        }
        return t;
      }();
      return kAscii[b];
    }
    cp = decode_utf8(s, n, i, len);
    std::uint8_t props = unicode::raw_properties(cp);
    if (props & 0x80) return kSpace;
    auto c = static_cast<unicode::GeneralCategory>(props & 0x1F);
    if (c >= unicode::kLu && c <= unicode::kLo) return kLetter;
    if (c >= unicode::kNd && c <= unicode::kNo) return kNumber;
    return kOther;
  }
  CharClass at(std::size_t i, std::size_t& len) const {
    char32_t cp;
    return at(i, len, cp);
  }
  // End of the run of characters of class `cls` starting at i.
  std::size_t run(std::size_t i, CharClass cls) const {
    while (i < n) {
      std::size_t len;
      if (at(i, len) != cls) break;
      i += len;
    }
    return i;
  }
  // End of the run of characters that are neither space, letter nor number.
  std::size_t run_other(std::size_t i) const { return run(i, kOther); }
};

// 's 't 're 've 'm 'll 'd, at s[i] == '\''. Case-insensitive matching also accepts U+017F (long s)
// and U+212A (Kelvin sign) as Oniguruma's Unicode case folding does.
std::size_t contraction(const Cursor& c, std::size_t i, bool ignore_case) {
  if (i + 1 >= c.n) return 0;
  auto lower = [&](std::size_t j, std::size_t& len) -> char32_t {
    char32_t cp;
    c.at(j, len, cp);
    if (!ignore_case) return cp;
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    if (cp == 0x17F) return 's';
    if (cp == 0x212A) return 'k';
    return cp;
  };
  std::size_t l1;
  char32_t a = lower(i + 1, l1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 1 + l1;
  if ((a == 'r' || a == 'v' || a == 'l') && i + 1 + l1 < c.n) {
    std::size_t l2;
    char32_t b = lower(i + 1 + l1, l2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
      return 1 + l1 + l2;
    }
  }
  return 0;
}

// \s+(?!\S) then \s+ at a whitespace character: the whole run if it reaches the end or is one
// character long, else the run minus its last character.
std::size_t space_run(const Cursor& c, std::size_t i) {
  std::size_t end = c.run(i, kSpace);
  if (end == c.n) return end - i;
  // Step back one character.
  std::size_t last = end - 1;
  while (last > i && (c.s[last] & 0xC0) == 0x80) --last;
  if (last > i) return last - i;
  return end - i;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ at a whitespace character: up to the last \r or \n of the run,
// else as space_run. Always inlined, as the three copies it replaces were.
[[gnu::always_inline]] inline std::size_t newline_or_space_run(const Cursor& c, std::size_t i) {
  const std::size_t end = c.run(i, kSpace);
  for (std::size_t k = end; k > i; --k) {
    if (c.s[k - 1] == '\r' || c.s[k - 1] == '\n') return k - i;
  }
  return space_run(c, i);
}

std::size_t scan_gpt2(const Cursor& c, std::size_t i) {
  std::size_t len;
  CharClass cls = c.at(i, len);
  if (c.s[i] == '\'') {
    if (std::size_t m = contraction(c, i, false)) return m;
  }
  std::size_t start = i;
  if (c.s[i] == ' ' && i + 1 < c.n) {
    std::size_t len2;
    CharClass next = c.at(i + 1, len2);
    if (next != kSpace) {  // " ?" then a letter, number or other run
      return c.run(i + 1, next) - start;
    }
  }
  if (cls != kSpace) return c.run(i, cls) - start;
  return space_run(c, i);
}

std::size_t scan_cl100k(const Cursor& c, std::size_t i, unsigned max_digits) {
  std::size_t len;
  char32_t cp;
  CharClass cls = c.at(i, len, cp);
  if (cp == '\'') {
    if (std::size_t m = contraction(c, i, true)) return m;
  }
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (cls == kLetter) return c.run(i, kLetter) - i;
  if (cls != kNumber && cp != '\r' && cp != '\n' && i + len < c.n) {
    std::size_t len2;
    if (c.at(i + len, len2) == kLetter) return c.run(i + len, kLetter) - i;
  }
  // \p{N}{1,max}
  if (cls == kNumber) {
    std::size_t j = i;
    unsigned count = 0;
    while (j < c.n && (max_digits == 0 || count < max_digits)) {
      std::size_t l;
      if (c.at(j, l) != kNumber) break;
      j += l;
      ++count;
    }
    return j - i;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  std::size_t j = i;
  if (cp == ' ' && i + 1 < c.n) {
    std::size_t l;
    if (c.at(i + 1, l) == kOther) j = i + 1;
  }
  if (j != i || cls == kOther) {
    j = c.run_other(j);
    while (j < c.n && (c.s[j] == '\r' || c.s[j] == '\n')) ++j;
    return j - i;
  }
  // cls == kSpace
  return newline_or_space_run(c, i);
}

// Scanners that test several classes per character read each character once as a byte of flag
// bits, chosen by a Classes struct: kSpaceBit and kCrLfBit (given to \s and to \r \n),
// ascii(x) (the other bits of a non-space ASCII character, read from a table built at compile
// time) and from_category(g) (the other bits of a non-ASCII character of general category g).
template <class Classes>
constexpr auto kAsciiFlags = [] {
  std::array<std::uint8_t, 128> t{};
  for (int x = 0; x < 128; ++x) {
    if (x == ' ' || (x >= 9 && x <= 13)) {
      t[x] = Classes::kSpaceBit;
      if (x == '\r' || x == '\n') t[x] |= Classes::kCrLfBit;
    } else {
      t[x] = Classes::ascii(x);
    }
  }
  return t;
}();
// The flags of the character at i, and its length in len.
template <class Classes>
[[gnu::always_inline]] inline std::uint8_t char_flags(const Cursor& c, std::size_t i,
                                                      std::size_t& len) {
  const unsigned char b = c.s[i];
  if (b < 0x80) {
    len = 1;
    return kAsciiFlags<Classes>[b];
  }
  const std::uint8_t props = unicode::raw_properties(decode_utf8(c.s, c.n, i, len));
  std::uint8_t f = Classes::from_category(static_cast<unsigned>(props & 0x1F));
  if (props & 0x80) f |= Classes::kSpaceBit;
  return f;
}

// The o200k family (GPT-4o, gpt-oss). Letters are split by case: U = [Lu Lt Lm Lo M] ("upper"),
// L = [Ll Lm Lo M] ("lower"); Lm, Lo and marks are both. P = [^\r\n\p{L}\p{N}] (marks included).
// Each character is read as a few flag bits (a table for ASCII), the hot loops are per character.
enum : std::uint8_t {
  kUpper = 1,
  kLower = 2,
  kIsLetter = 4,  // \p{L}
  kIsNumber = 8,  // \p{N}
  kIsSpace = 16,  // \s
  kIsCrLf = 32,
};
struct O200k {
  static constexpr std::uint8_t kSpaceBit = kIsSpace, kCrLfBit = kIsCrLf;
  static constexpr std::uint8_t ascii(int x) {
    if (x >= 'A' && x <= 'Z') return kUpper | kIsLetter;
    if (x >= 'a' && x <= 'z') return kLower | kIsLetter;
    if (x >= '0' && x <= '9') return kIsNumber;
    return 0;
  }
  static std::uint8_t from_category(unsigned g) {
    using namespace unicode;
    const bool mark = in_categories(g, kMn, kMe);
    std::uint8_t f = 0;
    if (g == kLu || g == kLt || g == kLm || g == kLo || mark) f |= kUpper;
    if (g == kLl || g == kLm || g == kLo || mark) f |= kLower;
    if (in_categories(g, kLu, kLo)) f |= kIsLetter;
    if (in_categories(g, kNd, kNo)) f |= kIsNumber;
    return f;
  }
};
// U*L+ at j (with the engine's backtracking: the L+ run starts at the last position of the U run,
// or just after it, that holds an L character). 0 = no match.
std::size_t o200k_upper_star_lower_plus(const Cursor& c, std::size_t j) {
  std::size_t last_lower_start = std::string_view::npos;  // where L+ could start within the U run
  std::size_t last_lower_len = 0;
  std::size_t k = j;
  while (k < c.n) {
    std::size_t len;
    const std::uint8_t f = char_flags<O200k>(c, k, len);
    if (!(f & kUpper)) {
      if (f & kLower) {  // L+ starts here and runs on greedily
        k += len;
        while (k < c.n && (char_flags<O200k>(c, k, len) & kLower)) k += len;
        return k;
      }
      break;
    }
    if (f & kLower) {
      last_lower_start = k;
      last_lower_len = len;
    }
    k += len;
  }
  if (last_lower_start == std::string_view::npos) return 0;
  // Backtracked: L+ holds the one L character at last_lower_start (what follows it in the U run
  // is not L, or it would be a later start).
  return last_lower_start + last_lower_len;
}
// U+L* at j. 0 = no match.
std::size_t o200k_upper_plus_lower_star(const Cursor& c, std::size_t j) {
  std::size_t k = j, len;
  while (k < c.n && (char_flags<O200k>(c, k, len) & kUpper)) k += len;
  if (k == j) return 0;
  while (k < c.n && (char_flags<O200k>(c, k, len) & kLower)) k += len;
  return k;
}

// Kept out of line, as is scan_deepseek: inlined into Regex::find_all they make GCC leave the
// Cursor helpers of the gpt2 and cl100k scanners out of line there (+20% instructions on cl100k).
[[gnu::noinline]] std::size_t scan_o200k(const Cursor& c, std::size_t i) {
  std::size_t first_len;
  const std::uint8_t first = char_flags<O200k>(c, i, first_len);
  auto with_contraction = [&](std::size_t end) {
    if (end < c.n && c.s[end] == '\'') end += contraction(c, end, true);
    return end - i;
  };
  // Alternatives 1 and 2: P? then U*L+ (resp. U+L*); the engine first tries with P taken.
  const bool p = !(first & (kIsLetter | kIsNumber | kIsCrLf));
  for (int alt = 0; alt < 2; ++alt) {
    if (p && i + first_len < c.n) {
      std::size_t end = alt == 0 ? o200k_upper_star_lower_plus(c, i + first_len)
                                 : o200k_upper_plus_lower_star(c, i + first_len);
      if (end) return with_contraction(end);
    }
    std::size_t end =
        alt == 0 ? o200k_upper_star_lower_plus(c, i) : o200k_upper_plus_lower_star(c, i);
    if (end) return with_contraction(end);
  }
  // \p{N}{1,3}
  if (first & kIsNumber) {
    std::size_t j = i, len;
    for (int count = 0; count < 3 && j < c.n && (char_flags<O200k>(c, j, len) & kIsNumber);
         ++count) {
      j += len;
    }
    return j - i;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*  (a mark is not \p{L}: it is in this class)
  auto other = [&](std::size_t j, std::size_t& len) {
    return !(char_flags<O200k>(c, j, len) & (kIsLetter | kIsNumber | kIsSpace));
  };
  std::size_t j = i, len;
  if (c.s[i] == ' ' && i + 1 < c.n && other(i + 1, len)) j = i + 1;
  if (j != i || other(i, len)) {
    while (j < c.n && other(j, len)) j += len;
    while (j < c.n && (c.s[j] == '\r' || c.s[j] == '\n' || c.s[j] == '/')) ++j;
    return j - i;
  }
  return newline_or_space_run(c, i);
}

// DeepSeek V3: [ASCII punctuation][A-Za-z]+ | [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ |
//  ?[\p{P}\p{S}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+. Unlike the others it does not match
// everywhere (a digit alone): 0 = no match at i.
enum : std::uint8_t {
  kDsLetter = 1,    // \p{L}
  kDsMark = 2,      // \p{M}
  kDsPunctSym = 4,  // \p{P} or \p{S}
  kDsSpace = 8,     // \s
  kDsCrLf = 16,
  kDsAsciiPunct = 32,  // the 32 ASCII punctuation and symbol characters
  kDsAsciiLetter = 64,
};
struct Deepseek {
  static constexpr std::uint8_t kSpaceBit = kDsSpace, kCrLfBit = kDsCrLf;
  static constexpr std::uint8_t ascii(int x) {
    if ((x >= 'A' && x <= 'Z') || (x >= 'a' && x <= 'z')) return kDsLetter | kDsAsciiLetter;
    if ((x >= 0x21 && x <= 0x2F) || (x >= 0x3A && x <= 0x40) || (x >= 0x5B && x <= 0x60) ||
        (x >= 0x7B && x <= 0x7E))
      return kDsPunctSym | kDsAsciiPunct;
    return 0;
  }
  static std::uint8_t from_category(unsigned g) {
    using namespace unicode;
    std::uint8_t f = 0;
    if (in_categories(g, kLu, kLo)) f |= kDsLetter;
    if (in_categories(g, kMn, kMe)) f |= kDsMark;
    if (in_categories(g, kPc, kSo)) f |= kDsPunctSym;
    return f;
  }
};

// Out of line: see scan_o200k.
[[gnu::noinline]] std::size_t scan_deepseek(const Cursor& c, std::size_t i) {
  std::size_t len0;
  const std::uint8_t f0 = char_flags<Deepseek>(c, i, len0);
  // [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
  if ((f0 & kDsAsciiPunct) && i + 1 < c.n &&
      (kAsciiFlags<Deepseek>[c.s[i + 1] & 0x7F] & kDsAsciiLetter) && c.s[i + 1] < 0x80) {
    std::size_t j = i + 1;
    while (j < c.n && c.s[j] < 0x80 && (kAsciiFlags<Deepseek>[c.s[j]] & kDsAsciiLetter)) ++j;
    return j - i;
  }
  // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ (the optional character first taken, then not)
  auto letter_run = [&](std::size_t j) {
    std::size_t len;
    while (j < c.n && (char_flags<Deepseek>(c, j, len) & (kDsLetter | kDsMark))) j += len;
    return j;
  };
  if (!(f0 & (kDsLetter | kDsPunctSym | kDsCrLf)) && i + len0 < c.n) {
    const std::size_t end = letter_run(i + len0);
    if (end > i + len0) return end - i;
  }
  if (f0 & (kDsLetter | kDsMark)) return letter_run(i) - i;
  //  ?[\p{P}\p{S}]+[\r\n]*
  std::size_t j = i, len;
  if (c.s[i] == ' ' && i + 1 < c.n && (char_flags<Deepseek>(c, i + 1, len) & kDsPunctSym))
    j = i + 1;
  if (j != i || (f0 & kDsPunctSym)) {
    while (j < c.n && (char_flags<Deepseek>(c, j, len) & kDsPunctSym)) j += len;
    while (j < c.n && (c.s[j] == '\r' || c.s[j] == '\n')) ++j;
    return j - i;
  }
  if (!(f0 & kDsSpace)) return 0;
  return newline_or_space_run(c, i);
}

// ---------------------------------------------------------------------------------------------
// Rewriting Oniguruma class escapes into explicit ranges.

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

Ranges complement(const Ranges& r) {
  Ranges out;
  char32_t next = 0;
  for (auto [a, b] : r) {
    if (a > next) out.emplace_back(next, a - 1);
    next = b + 1;
  }
  if (next <= 0x10FFFF) out.emplace_back(next, 0x10FFFF);
  // Surrogates cannot be written in a UTF pattern.
  Ranges clean;
  for (auto [a, b] : out) {
    if (b < 0xD800 || a > 0xDFFF) {
      clean.emplace_back(a, b);
      continue;
    }
    if (a < 0xD800) clean.emplace_back(a, 0xD7FF);
    if (b > 0xDFFF) clean.emplace_back(0xE000, b);
  }
  return clean;
}

void append_ranges(std::string& out, const Ranges& ranges) {
  char buf[40];
  for (auto [a, b] : ranges) {
    if (a == b) {
      std::snprintf(buf, sizeof buf, "\\x{%X}", static_cast<unsigned>(a));
    } else {
      std::snprintf(buf, sizeof buf, "\\x{%X}-\\x{%X}", static_cast<unsigned>(a),
                    static_cast<unsigned>(b));
    }
    out += buf;
  }
}

}  // namespace

Result<std::string> rewrite_unicode_classes(std::string_view p) {
  std::string out;
  out.reserve(p.size() * 4);
  int class_depth = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    char ch = p[i];
    if (ch == '[') {
      ++class_depth;
      out += ch;
      if (i + 1 < p.size() && p[i + 1] == '^') {
        out += '^';
        ++i;
      }
      // A ']' right after '[' or '[^' is a literal in both syntaxes.
      if (i + 1 < p.size() && p[i + 1] == ']') {
        out += "\\]";
        ++i;
      }
      continue;
    }
    if (ch == ']' && class_depth > 0) {
      --class_depth;
      out += ch;
      continue;
    }
    if (ch != '\\' || i + 1 >= p.size()) {
      out += ch;
      continue;
    }
    char e = p[i + 1];
    std::string name;
    bool negate = false;
    std::size_t consumed = 2;
    if (e == 'p' || e == 'P') {
      std::size_t close = p.find('}', i + 2);
      if (i + 2 >= p.size() || p[i + 2] != '{' || close == std::string_view::npos) {
        return Error{"TokenizerError", "invalid \\p escape in regex: " + std::string(p), 0, 0, {}};
      }
      name = std::string(p.substr(i + 3, close - (i + 3)));
      negate = e == 'P';
      if (!name.empty() && name[0] == '^') {
        negate = !negate;
        name.erase(0, 1);
      }
      consumed = close + 1 - i;
    } else if (e == 's' || e == 'S') {
      name = "White_Space";
      negate = e == 'S';
    } else if (e == 'd' || e == 'D') {
      name = "digit";
      negate = e == 'D';
    } else if (e == 'w' || e == 'W') {
      name = "word";
      negate = e == 'W';
    } else if (e == 'h' || e == 'H') {  // Oniguruma: hexadecimal digit (PCRE2: horizontal space)
      out += class_depth ? (e == 'h' ? "0-9a-fA-F" : "\\x{0}-/:-@G-`g-\\x{10FFFF}")
                         : (e == 'h' ? "[0-9a-fA-F]" : "[^0-9a-fA-F]");
      ++i;
      continue;
    } else {
      out += ch;
      out += e;
      ++i;
      continue;
    }
    Ranges ranges = unicode::class_ranges(name);
    if (ranges.empty()) {
      // A script or property our tables do not hold: leave it to PCRE2's own tables.
      out.append(p.substr(i, consumed));
      i += consumed - 1;
      continue;
    }
    if (class_depth > 0) {
      append_ranges(out, negate ? complement(ranges) : ranges);
    } else {
      out += negate ? "[^" : "[";
      append_ranges(out, ranges);
      out += ']';
    }
    i += consumed - 1;
  }
  return out;
}

bool Regex::in_class(char32_t cp) const {
  if (cp < 128) return (class_ascii_[cp >> 6] >> (cp & 63)) & 1;
  auto it = std::upper_bound(
      class_ranges_.begin(), class_ranges_.end(), cp,
      [](char32_t v, const std::pair<char32_t, char32_t>& r) { return v < r.first; });
  return it != class_ranges_.begin() && cp <= std::prev(it)->second;
}

// X+ or X{1,n} where X is \p{Name} or a bracket class of plain characters and ranges (no escape,
// no negation): anything else is left to PCRE2.
bool Regex::parse_class_run(std::string_view p) {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  std::size_t i = 0;
  if (p.substr(0, 3) == "\\p{") {
    const std::size_t close = p.find('}');
    if (close == std::string_view::npos || p[3] == '^') return false;
    ranges = unicode::class_ranges(p.substr(3, close - 3));
    if (ranges.empty()) return false;
    i = close + 1;
  } else if (p.size() > 2 && p[0] == '[' && p[1] != '^' && p[1] != ']') {
    i = 1;
    const auto* u = reinterpret_cast<const unsigned char*>(p.data());
    while (true) {
      if (i >= p.size()) return false;
      if (p[i] == ']') break;
      if (p[i] == '\\' || p[i] == '[' || (p[i] == '-' && i > 1 && p[i - 1] != '[')) return false;
      std::size_t l;
      const char32_t a = decode_utf8(u, p.size(), i, l);
      i += l;
      char32_t b = a;
      if (i + 1 < p.size() && p[i] == '-' && p[i + 1] != ']') {
        ++i;
        if (p[i] == '\\' || p[i] == '[') return false;
        b = decode_utf8(u, p.size(), i, l);
        i += l;
        if (b < a) return false;
      }
      ranges.emplace_back(a, b);
    }
    ++i;  // ']'
  } else {
    return false;
  }
  std::string_view q = p.substr(i);
  std::size_t max = 0;
  if (q == "+") {
    max = 0;
  } else if (q.size() > 4 && q.substr(0, 3) == "{1," && q.back() == '}') {
    for (char ch : q.substr(3, q.size() - 4)) {
      if (ch < '0' || ch > '9' || max > 1000000) return false;
      max = max * 10 + static_cast<std::size_t>(ch - '0');
    }
    if (max == 0) return false;
  } else {
    return false;
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<char32_t, char32_t>> merged;
  for (auto r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  for (auto [a, b] : merged) {
    for (char32_t c = a; c <= b && c < 128; ++c)
      class_ascii_[c >> 6] |= std::uint64_t{1} << (c & 63);
  }
  class_ranges_ = std::move(merged);
  class_max_ = max;
  return true;
}

Regex::~Regex() {
  if (code_) pcre2_code_free(static_cast<pcre2_code*>(code_));
}

Result<std::shared_ptr<Regex>> Regex::compile(std::string_view pattern,
                                              const RegexOptions& options) {
  std::shared_ptr<Regex> re(new Regex());
  re->pattern_ = std::string(pattern);
  re->match_limit_ = options.match_limit;
  if (options.hand_scanners) {
    if (pattern == kGpt2Pattern) {
      re->scanner_ = RegexScanner::kGpt2;
    } else if (pattern == kLlama3Pattern) {
      re->scanner_ = RegexScanner::kCl100k;
      re->max_digits_ = 3;
    } else if (pattern == kO200kPattern) {
      re->scanner_ = RegexScanner::kO200k;
    } else if (pattern == kDeepseekPattern) {
      re->scanner_ = RegexScanner::kDeepseek;
    } else if (re->parse_class_run(pattern)) {
      re->scanner_ = RegexScanner::kClassRun;
    } else if (pattern == kQwenPattern) {
      re->scanner_ = RegexScanner::kCl100k;
      re->max_digits_ = 1;
    }
    if (re->scanner_ != RegexScanner::kNone) return re;
  }
  auto rewritten = rewrite_unicode_classes(pattern);
  if (!rewritten) return rewritten.error();
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten->data()),
                                   rewritten->size(), PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK,
                                   &error_code, &error_offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    return Error{"TokenizerError",
                 "cannot compile regex " + std::string(pattern) + ": " +
                     reinterpret_cast<const char*>(message),
                 0,
                 0,
                 {}};
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT (unsupported CPU) it still works
  re->code_ = code;
  return re;
}

namespace {

// Per-thread PCRE2 match state (match data and a JIT stack large enough for long lookaheads).
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(1, nullptr);
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchState() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
};

}  // namespace

Result<bool> Regex::find_all(std::string_view text, SpanVector& out) const {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  if (scanner_ == RegexScanner::kDeepseek || scanner_ == RegexScanner::kClassRun) {
    // Patterns that do not match everywhere: a position without a match is skipped.
    Cursor c{s, n};
    std::size_t i = 0;
    while (i < n) {
      std::size_t len = 0;
      if (scanner_ == RegexScanner::kDeepseek) {
        len = scan_deepseek(c, i);
      } else {
        std::size_t j = i, count = 0, l;
        while (j < n && (class_max_ == 0 || count < class_max_) &&
               in_class(decode_utf8(s, n, j, l))) {
          j += l;
          ++count;
        }
        len = j - i;
      }
      if (len == 0) {
        i += std::min<std::size_t>(unicode::utf8_length(s[i]), n - i);
        continue;
      }
      if (i + len > n) len = n - i;
      out.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len));
      i += len;
    }
    return true;
  }
  if (scanner_ != RegexScanner::kNone) {
    Cursor c{s, n};
    std::size_t i = 0;
    while (i < n) {
      std::size_t len = scanner_ == RegexScanner::kGpt2    ? scan_gpt2(c, i)
                        : scanner_ == RegexScanner::kO200k ? scan_o200k(c, i)
                                                           : scan_cl100k(c, i, max_digits_);
      if (len == 0) len = unicode::utf8_length(s[i]);  // unreachable: the patterns match everywhere
      if (i + len > n) len = n - i;
      out.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len));
      i += len;
    }
    return true;
  }
  thread_local MatchState state;
  pcre2_set_match_limit(state.context, match_limit_);
  auto* code = static_cast<pcre2_code*>(code_);
  std::size_t last_end = 0;
  bool have_last = false;
  std::size_t last_match_end = 0;
  while (last_end <= n) {
    int rc = pcre2_match(code, s, n, last_end, PCRE2_NO_UTF_CHECK, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      return Error{"LimitError",
                   "regex " + pattern_ + " failed: " + reinterpret_cast<const char*>(message),
                   0,
                   0,
                   {}};
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(state.data);
    std::size_t b = ov[0], e = ov[1];
    if (b == e && have_last && last_match_end == e) {
      // Oniguruma's find_iter: no empty match right after the previous match; move on a character.
      last_end += last_end < n ? unicode::utf8_length(s[last_end]) : 1;
      continue;
    }
    last_end = e;
    last_match_end = e;
    have_last = true;
    out.emplace_back(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e));
  }
  return true;
}

}  // namespace chatwire::tokenize
