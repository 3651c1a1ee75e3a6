// Text measurements on rendered prompts (see text.hpp).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "probe/text.hpp"

#include <pcre2.h>

#include <algorithm>
#include <cstdio>

namespace chatwire::probe::text {

namespace {

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // a stray continuation byte counts alone
}

std::size_t next_code_point(std::string_view s, std::size_t pos) {
  return std::min(s.size(), pos + utf8_length(static_cast<unsigned char>(s[pos])));
}

bool is_ascii_space(char c) {
  return kWhitespace.find(c) != std::string_view::npos;
}

// The character set a marker is stripped of, as code points in UTF-8.
constexpr std::string_view kMarkerBrackets[] = {"<", ">", "[", "]", "|", "\xEF\xBD\x9C" /* ｜ */};

std::size_t bracket_at(std::string_view s, std::size_t pos) {
  for (std::string_view b : kMarkerBrackets)
    if (s.substr(pos, b.size()) == b) return b.size();
  return 0;
}

std::size_t bracket_before(std::string_view s, std::size_t end) {
  for (std::string_view b : kMarkerBrackets)
    if (end >= b.size() && s.substr(end - b.size(), b.size()) == b) return b.size();
  return 0;
}

// Escapes literal text for a PCRE2 pattern: ASCII punctuation gets a backslash, control
// characters become \n \t ... (hex otherwise); letters, digits and non-ASCII stay.
std::string escape_pattern(std::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
        c == '_') {
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x{%02x}", u);
      out += buf;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

// The role word of a header, and what may follow it up to the next literal part.
constexpr std::string_view kRolePattern = "([A-Za-z_][A-Za-z0-9_.\\-]*)(?: [^\\n]{0,80}?)?";

}  // namespace

std::string_view lstrip(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_ascii_space(s[i])) ++i;
  return s.substr(i);
}

std::string_view rstrip(std::string_view s) {
  std::size_t n = s.size();
  while (n > 0 && is_ascii_space(s[n - 1])) --n;
  return s.substr(0, n);
}

std::string_view strip(std::string_view s) {
  return rstrip(lstrip(s));
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::size_t marker_at(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return 0;
  if (s[pos] == '<') {
    std::size_t i = pos + 1, count = 0;
    while (i < s.size() && s[i] != '<' && s[i] != '>' && !is_ascii_space(s[i]) && count <= 64) {
      i = next_code_point(s, i);
      ++count;
    }
    if (count >= 1 && count <= 64 && i < s.size() && s[i] == '>') return i + 1 - pos;
    return 0;
  }
  if (s[pos] == '[') {
    std::size_t i = pos + 1;
    while (i < s.size() && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_') && i - pos - 1 <= 32) ++i;
    std::size_t count = i - pos - 1;
    if (count >= 2 && count <= 32 && i < s.size() && s[i] == ']') return i + 1 - pos;
  }
  return 0;
}

std::vector<std::string> markers(std::string_view s) {
  std::vector<std::string> found;
  for (std::size_t i = 0; i < s.size();) {
    if (std::size_t n = marker_at(s, i)) {
      found.emplace_back(s.substr(i, n));
      i += n;
    } else {
      i = next_code_point(s, i);
    }
  }
  return found;
}

std::string marker_core(std::string_view marker) {
  std::size_t begin = 0, end = marker.size();
  while (begin < end) {
    std::size_t n = bracket_at(marker.substr(0, end), begin);
    if (n == 0) break;
    begin += n;
  }
  while (end > begin) {
    std::size_t n = bracket_before(marker.substr(begin), end - begin);
    if (n == 0) break;
    end -= n;
  }
  return std::string(marker.substr(begin, end - begin));
}

std::vector<std::size_t> atom_starts(std::string_view s) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size();) {
    starts.push_back(i);
    std::size_t n = marker_at(s, i);
    i = n ? i + n : next_code_point(s, i);
  }
  starts.push_back(s.size());
  return starts;
}

DiffRegion diff_region(std::string_view a, std::string_view b) {
  auto ta = atom_starts(a), tb = atom_starts(b);
  std::size_t na = ta.size() - 1, nb = tb.size() - 1;
  auto atom = [](const std::vector<std::size_t>& t, std::string_view s, std::size_t i) {
    return s.substr(t[i], t[i + 1] - t[i]);
  };
  std::size_t n = std::min(na, nb), p = 0;
  while (p < n && atom(ta, a, p) == atom(tb, b, p)) ++p;
  std::size_t q = 0;
  while (q < n - p && atom(ta, a, na - 1 - q) == atom(tb, b, nb - 1 - q)) ++q;
  return {ta[p], ta[na - q], tb[nb - q]};
}

HeaderPattern::~HeaderPattern() {
  if (code_ != nullptr) pcre2_code_free(static_cast<pcre2_code*>(code_));
}

std::unique_ptr<HeaderPattern> HeaderPattern::from_user_prefix(std::string_view user_prefix) {
  // Split at every "user" (any ASCII case), as Python's re.split does.
  std::vector<std::string> pieces;
  std::size_t from = 0;
  for (std::size_t i = 0; i + 4 <= user_prefix.size();) {
    bool hit = true;
    for (std::size_t k = 0; k < 4; ++k) {
      char c = user_prefix[i + k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != "user"[k]) {
        hit = false;
        break;
      }
    }
    if (hit) {
      pieces.emplace_back(user_prefix.substr(from, i - from));
      i += 4;
      from = i;
    } else {
      ++i;
    }
  }
  if (pieces.empty()) return nullptr;
  pieces.emplace_back(user_prefix.substr(from));

  // Cut the text before the role back to the marker or line that opens the header: a
  // prefix may start with the previous turn's end marker.
  std::string lead = pieces[0];
  std::size_t last_start = std::string::npos, last_end = 0;
  for (std::size_t i = 0; i < lead.size();) {
    if (std::size_t n = marker_at(lead, i)) {
      last_start = i;
      last_end = i + n;
      i += n;
    } else {
      i = next_code_point(lead, i);
    }
  }
  if (last_start != std::string::npos && last_end == lead.size()) {
    lead = lead.substr(last_start);
  } else {
    long cut = 0;
    auto rfind = [&](char c) {
      return lead.rfind(c) == std::string::npos ? -1L : static_cast<long>(lead.rfind(c));
    };
    cut = std::max(
        {rfind('<'), rfind('['), lead.find('\n') != std::string::npos ? rfind('\n') + 1 : 0L});
    lead = lead.substr(static_cast<std::size_t>(std::max(cut, 0L)));
  }
  pieces[0] = lead;

  std::string pattern;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) pattern += kRolePattern;
    pattern += escape_pattern(pieces[i]);
  }
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_NO_UTF_CHECK, &error_code, &error_offset, nullptr);
  if (code == nullptr) return nullptr;
  std::unique_ptr<HeaderPattern> result(new HeaderPattern());
  result->lead_ = std::move(lead);
  result->code_ = code;
  return result;
}

std::optional<HeaderPattern::Match> HeaderPattern::last(std::string_view output, std::size_t lo,
                                                        std::size_t hi) const {
  auto* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code, nullptr);
  if (data == nullptr) return std::nullopt;
  std::optional<Match> found;
  std::size_t start = hi;
  hi = std::min(hi, output.size());
  while (true) {
    // The last occurrence of the lead that lies entirely in [lo, start).
    if (!lead_.empty()) {
      if (start < lo + lead_.size()) break;
      std::string_view window = output.substr(lo, start - lo);
      std::size_t at = window.rfind(lead_);
      if (at == std::string_view::npos) break;
      start = lo + at;
    } else {
      if (start <= lo) break;
      --start;
      // Step to the start of a code point.
      while (start > lo && (static_cast<unsigned char>(output[start]) & 0xC0) == 0x80) --start;
      if (start > 0 && is_word_char(output[start - 1])) continue;  // a role word starts a word
    }
    int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(output.data()), hi, start,
                         PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc > 1) {
      PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
      found = Match{ov[0], ov[1], std::string(output.substr(ov[2], ov[3] - ov[2]))};
      break;
    }
  }
  pcre2_match_data_free(data);
  return found;
}

}  // namespace chatwire::probe::text
