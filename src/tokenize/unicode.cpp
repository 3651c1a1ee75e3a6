#include "tokenize/unicode.hpp"

#include <array>
#include <cstring>

#include "util/utf8.hpp"

namespace chatwire::tokenize::unicode {
namespace {
#include "tokenize/unicode_tables.inc"
}  // namespace

const unsigned short* const kStage1 = kUnicodeStage1;
const unsigned char (*const kStage2)[256] = kUnicodeStage2;

void append_utf8(std::string& out, char32_t cp) {
  util::utf8::append(out, cp);
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // ASCII 8 bytes per step (every encode checks its whole input).
    while (i + 8 <= s.size()) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= s.size()) break;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    char32_t cp = decode_utf8(s, i, len);
    if (cp == 0xFFFD && len == 1) return false;
    i += len;
  }
  return true;
}

std::size_t complete_utf8_prefix(std::string_view s) {
  // Look back at most 3 bytes for the lead byte of a truncated character.
  std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    unsigned char b = static_cast<unsigned char>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte
    if (b >= 0xC0 && utf8_length(b) > back) return n - back;
    return n;
  }
  return n;
}

std::vector<std::pair<char32_t, char32_t>> class_ranges(std::string_view name) {
  // Category membership mask by GeneralCategory index.
  std::uint32_t mask = 0;
  bool white_space = false;
  auto bit = [](GeneralCategory c) { return std::uint32_t{1} << c; };
  struct Named {
    std::string_view name;
    std::uint32_t mask;
  };
  const std::uint32_t letters = bit(kLu) | bit(kLl) | bit(kLt) | bit(kLm) | bit(kLo);
  const std::uint32_t marks = bit(kMn) | bit(kMc) | bit(kMe);
  const std::uint32_t numbers = bit(kNd) | bit(kNl) | bit(kNo);
  const std::uint32_t puncts =
      bit(kPc) | bit(kPd) | bit(kPs) | bit(kPe) | bit(kPi) | bit(kPf) | bit(kPo);
  const std::uint32_t symbols = bit(kSm) | bit(kSc) | bit(kSk) | bit(kSo);
  const std::uint32_t separators = bit(kZs) | bit(kZl) | bit(kZp);
  const std::uint32_t others = bit(kCc) | bit(kCf) | bit(kCs) | bit(kCo) | bit(kCn);
  static constexpr std::array<std::string_view, 30> kShort = {
      "Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
      "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"};
  const Named named[] = {
      {"L", letters},
      {"Letter", letters},
      {"M", marks},
      {"Mark", marks},
      {"N", numbers},
      {"Number", numbers},
      {"P", puncts},
      {"Punctuation", puncts},
      {"S", symbols},
      {"Symbol", symbols},
      {"Z", separators},
      {"Separator", separators},
      {"C", others},
      {"Other", others},
      {"LC", bit(kLu) | bit(kLl) | bit(kLt)},
      {"digit", bit(kNd)},
      {"word", letters | marks | bit(kNd) | bit(kPc)},
  };
  for (const auto& n : named) {
    if (n.name == name) mask = n.mask;
  }
  for (std::size_t i = 0; i < kShort.size(); ++i) {
    if (kShort[i] == name) mask = bit(static_cast<GeneralCategory>(i));
  }
  if (name == "White_Space" || name == "space") white_space = true;
  const bool word = name == "word";  // + Alphabetic + Join_Control
  const bool alphabetic = name == "Alphabetic" || name == "Alpha";
  if (alphabetic) mask = 0;
  std::vector<std::pair<char32_t, char32_t>> ranges;
  if (mask == 0 && !white_space && !alphabetic) return ranges;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    bool in = white_space ? is_white_space(cp) : ((mask >> category(cp)) & 1) != 0;
    if ((word || alphabetic) && is_alphabetic(cp)) in = true;
    if (word && (cp == 0x200C || cp == 0x200D)) in = true;
    if (cp >= 0xD800 && cp <= 0xDFFF) in = false;  // surrogates never occur in UTF-8 text
    if (!in) continue;
    if (!ranges.empty() && ranges.back().second + 1 == cp) {
      ranges.back().second = cp;
    } else {
      ranges.emplace_back(cp, cp);
    }
  }
  return ranges;
}

}  // namespace chatwire::tokenize::unicode
