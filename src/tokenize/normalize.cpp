// Normalizers: one function per kind, each rewriting a Text (and its alignment when tracked).
#include <utf8proc.h>

#include <algorithm>
#include <bit>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tokenize/pipeline.hpp"
#include "tokenize/unicode.hpp"

namespace chatwire::tokenize {
namespace {

bool is_ascii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

int combining_class(utf8proc_int32_t cp) {
  return utf8proc_get_property(cp)->combining_class;
}

// The code points `cp` decomposes into under `options` (a decomposition is at most 18), in
// `out`; their count, or 0 where utf8proc refuses the code point.
std::size_t decompose(char32_t cp, utf8proc_option_t options, utf8proc_int32_t (&out)[32]) {
  const utf8proc_ssize_t n =
      utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), out, 32, options, nullptr);
  return n > 0 && n <= 32 ? static_cast<std::size_t>(n) : 0;
}

// Canonical ordering of decomposed text, each run of non-starters sorted stably by combining
// class (`code_point` reads an element's). utf8proc orders a run by exchanging neighbours,
// quadratic on a long run of alternating classes (256 KB of U+0301 U+0323 took 34 s); the stable
// sort is the same order (marks of one class keep theirs, a starter is a barrier) in n log n.
template <typename T, typename CodePoint>
void canonical_order(std::vector<T>& text, CodePoint code_point) {
  auto less = [&](const T& x, const T& y) {
    return combining_class(code_point(x)) < combining_class(code_point(y));
  };
  for (std::size_t i = 0; i < text.size();) {
    std::size_t end = i;
    while (end < text.size() && combining_class(code_point(text[end])) != 0) ++end;
    if (end - i > 1)
      std::stable_sort(text.begin() + static_cast<std::ptrdiff_t>(i),
                       text.begin() + static_cast<std::ptrdiff_t>(end), less);
    i = end == i ? i + 1 : end;
  }
}

#include "tokenize/nfc_legacy_marks.inc"

// Marks that utf8proc gives a combining class but HF's older tables do not (so HF never reorders
// or composes across them), sorted.
const std::vector<char32_t>& legacy_marks() {
  static const std::vector<char32_t> marks = [] {
    std::vector<char32_t> v;
    for (char32_t cp : kNfcLegacyMarks) {
      if (combining_class(static_cast<utf8proc_int32_t>(cp)) != 0) v.push_back(cp);
    }
    std::sort(v.begin(), v.end());
    return v;
  }();
  return marks;
}

bool is_legacy_mark(char32_t cp) {
  const auto& marks = legacy_marks();
  return cp >= 0x300 && std::binary_search(marks.begin(), marks.end(), cp);
}

// Characters HF's NFC/NFKC tables have no decomposition for (newer than its Unicode version).
bool is_opaque(char32_t cp, NormalizerKind kind) {
  static const auto sorted = [](const char32_t* b, const char32_t* e) {
    std::vector<char32_t> v(b, e);
    std::sort(v.begin(), v.end());
    return v;
  };
  static const std::vector<char32_t> nfc = sorted(std::begin(kNfcOpaque), std::end(kNfcOpaque));
  static const std::vector<char32_t> nfkc = sorted(std::begin(kNfkcOpaque), std::end(kNfkcOpaque));
  bool compat = kind == NormalizerKind::kNfkc || kind == NormalizerKind::kNfkd;
  const auto& list = compat ? nfkc : nfc;
  return cp >= 0xA0 && std::binary_search(list.begin(), list.end(), cp);
}

bool utf8proc_normalize(std::string_view in, NormalizerKind kind, std::string& out);

// Characters that the normalization form leaves unchanged and that never combine with what precedes
// them (quick-check Yes starters): runs of them are copied without calling utf8proc. Only a
// character right before an unstable one may still compose with it, so it joins that run.
bool quick_stable(char32_t cp, NormalizerKind kind) {
  if (cp < 0x80) return true;
  if ((cp >= 0x4E00 && cp <= 0x9FFF)) return true;  // CJK unified ideographs: no decomposition
  if (kind == NormalizerKind::kNfc) {
    return cp < 0x300 || (cp >= 0x400 && cp <= 0x482) || (cp >= 0x48A && cp <= 0x52F) ||
           (cp >= 0x3000 && cp <= 0x3029) || (cp >= 0x3030 && cp <= 0x303F) ||
           (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xFF01 && cp <= 0xFF60);
  }
  if (kind == NormalizerKind::kNfkc) return cp >= 0xAC00 && cp <= 0xD7A3;
  return false;
}

bool normalize_region(std::string_view in, NormalizerKind kind, std::string& out);

bool unicode_normalize(std::string_view in, NormalizerKind kind, std::string& out) {
  std::size_t flushed = 0;                           // in[0, flushed) is in `out`
  std::size_t region = std::string_view::npos;       // start of the pending unstable run
  std::size_t last_stable = std::string_view::npos;  // start of the last stable character
  std::size_t i = 0;
  while (i < in.size()) {
    std::size_t len;
    char32_t cp = static_cast<unsigned char>(in[i]) < 0x80 ? static_cast<unsigned char>(in[i])
                                                           : unicode::decode_utf8(in, i, len);
    if (cp < 0x80) len = 1;
    if (quick_stable(cp, kind)) {
      if (region != std::string_view::npos) {
        if (!normalize_region(in.substr(region, i - region), kind, out)) return false;
        flushed = i;
        region = std::string_view::npos;
      }
      last_stable = i;
    } else if (region == std::string_view::npos) {
      std::size_t start =
          (last_stable != std::string_view::npos && last_stable >= flushed) ? last_stable : i;
      out.append(in.substr(flushed, start - flushed));
      region = start;
    }
    i += len;
  }
  if (region != std::string_view::npos) return normalize_region(in.substr(region), kind, out);
  out.append(in.substr(flushed));
  return true;
}

// Normalization of one run of text as HF does it: utf8proc, with the run cut at the marks HF sees
// as starters (each such mark stays where it is).
bool normalize_region(std::string_view in, NormalizerKind kind, std::string& out) {
  std::size_t start = 0, i = 0;
  while (i < in.size()) {
    std::size_t len;
    char32_t cp = unicode::decode_utf8(in, i, len);
    if (cp >= 0xA0 && (is_legacy_mark(cp) || is_opaque(cp, kind))) {
      if (!utf8proc_normalize(in.substr(start, i - start), kind, out)) return false;
      out.append(in.substr(i, len));
      start = i + len;
    }
    i += len;
  }
  return utf8proc_normalize(in.substr(start), kind, out);
}

bool utf8proc_normalize(std::string_view in, NormalizerKind kind, std::string& out) {
  if (in.empty()) return true;
  int options = UTF8PROC_STABLE;
  switch (kind) {
    case NormalizerKind::kNfc:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalizerKind::kNfd:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalizerKind::kNfkc:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    default:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  // utf8proc_map's steps, with the canonical ordering done here (canonical_order).
  std::vector<utf8proc_int32_t> cps;
  cps.reserve(in.size());
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(in.data());
  const auto size = static_cast<utf8proc_ssize_t>(in.size());
  for (utf8proc_ssize_t pos = 0; pos < size;) {
    utf8proc_int32_t cp = -1;
    const utf8proc_ssize_t len = utf8proc_iterate(bytes + pos, size - pos, &cp);
    if (len <= 0 || cp < 0) return false;
    pos += len;
    utf8proc_int32_t decomposed[32];
    const std::size_t n =
        decompose(static_cast<char32_t>(cp), static_cast<utf8proc_option_t>(options), decomposed);
    if (n == 0) return false;
    cps.insert(cps.end(), decomposed, decomposed + n);
  }
  canonical_order(cps, [](utf8proc_int32_t cp) { return cp; });
  const utf8proc_ssize_t n =
      utf8proc_normalize_utf32(cps.data(), static_cast<utf8proc_ssize_t>(cps.size()),
                               static_cast<utf8proc_option_t>(options));
  if (n < 0) return false;
  utf8proc_uint8_t encoded[4];
  for (utf8proc_ssize_t k = 0; k < n; ++k) {
    const utf8proc_ssize_t len = utf8proc_encode_char(cps[static_cast<std::size_t>(k)], encoded);
    out.append(reinterpret_cast<const char*>(encoded), static_cast<std::size_t>(len));
  }
  return true;
}

// A character before which normalization may restart without changing the result: a starter that
// never composes with what precedes it. ASCII is the common case; the few starters that compose
// backwards (Hangul vowels/trailing consonants, some Indic vowel signs) are excluded.
bool is_stable_boundary(char32_t cp) {
  if (cp < 0x80) return true;
  const utf8proc_property_t* property = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
  if (property->combining_class != 0) return false;
  if (cp >= 0x1161 && cp <= 0x11C2) return false;
  // A starter whose decomposition begins with a non-starter (Tibetan U+0F73, U+0F75, U+0F81:
  // U+0F71 first) is reordered with the marks before it, so it is no boundary either.
  if (property->decomp_seqindex != UINT16_MAX) {
    utf8proc_int32_t decomposed[32];
    if (decompose(cp, static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT),
                  decomposed) > 0 &&
        combining_class(decomposed[0]) != 0)
      return false;
  }
  switch (cp) {
    case 0x0B3E:
    case 0x0B56:
    case 0x0B57:
    case 0x0BBE:
    case 0x0BD7:
    case 0x0CC2:
    case 0x0CD5:
    case 0x0CD6:
    case 0x0D3E:
    case 0x0D57:
    case 0x0DCF:
    case 0x0DDF:
    case 0x102E:
    case 0x1B35:
    case 0x11127:
    case 0x1133E:
    case 0x11357:
    case 0x114B0:
    case 0x114BA:
    case 0x114BD:
    case 0x115AF:
    case 0x11930:
      return false;
    default:
      return true;
  }
}

namespace {

// A chunk normalized with each output character aligned as HF's NormalizedString aligns it
// (tokenizers' unicode-normalization-alignments, measured against npm tokenizers): each input
// character decomposes into its first character, which stands for it (change 0), and inserted
// ones (change +1); canonical ordering moves each character with its change; a character
// composed into the starter before it folds its change into the composite's (one it stood for
// becomes one the composite skips). The output is then aligned in order: a change 0 or -n
// character takes the next input character and skips n more, an inserted one shares the
// alignment of the last taken. So `e` U+0301 composed is aligned to the `e`, and the text after
// it keeps its own offsets. Appends to `out` and returns true when the result is `expected`
// (the chunk as unicode_normalize writes it, which also knows HF's older tables); false
// (nothing appended) otherwise.
bool append_aligned(NormalizerKind kind, const Text& in, std::size_t b, std::size_t e,
                    std::string_view expected, Text& out) {
  const bool compose = kind == NormalizerKind::kNfc || kind == NormalizerKind::kNfkc;
  const bool compat = kind == NormalizerKind::kNfkc || kind == NormalizerKind::kNfkd;
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE |
                                                      (compat ? UTF8PROC_COMPAT : 0));
  struct Unit {
    utf8proc_int32_t cp;
    int change;
  };
  std::vector<Unit> units;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sources;  // the input characters
  for (std::size_t i = b; i < e;) {
    std::size_t len;
    const char32_t cp = unicode::decode_utf8(in.s, i, len);
    utf8proc_int32_t decomposed[32];
    const std::size_t n = decompose(cp, options, decomposed);
    if (n == 0) return false;
    for (std::size_t k = 0; k < n; ++k) units.push_back({decomposed[k], k == 0 ? 0 : 1});
    sources.emplace_back(in.begin[i], in.end[i + len - 1]);
    i += len;
  }
  canonical_order(units, [](const Unit& unit) { return unit.cp; });
  if (compose && !units.empty()) {
    // Canonical composition (UAX #15): a character composes into the last starter unless a
    // character between them is a starter or has a class at least its own.
    auto composite = [](utf8proc_int32_t starter, utf8proc_int32_t ch) -> utf8proc_int32_t {
      utf8proc_int32_t pair[2] = {starter, ch};
      const utf8proc_ssize_t n =
          utf8proc_normalize_utf32(pair, 2, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE));
      return n == 1 ? pair[0] : -1;
    };
    bool has_starter = combining_class(units[0].cp) == 0;
    std::size_t starter = 0, kept = 1;
    int last_class = has_starter ? 0 : 256;
    for (std::size_t i = 1; i < units.size(); ++i) {
      const Unit unit = units[i];
      const int unit_class = combining_class(unit.cp);
      if (has_starter && (last_class < unit_class || last_class == 0)) {
        if (const utf8proc_int32_t c = composite(units[starter].cp, unit.cp); c >= 0) {
          units[starter].cp = c;
          units[starter].change += unit.change - 1;
          continue;
        }
      }
      if (unit_class == 0) {
        starter = kept;
        has_starter = true;
      }
      last_class = unit_class;
      units[kept++] = unit;
    }
    units.resize(kept);
  }
  std::string text;
  for (const Unit& unit : units) unicode::append_utf8(text, static_cast<char32_t>(unit.cp));
  if (text != expected) return false;
  std::size_t at = 0, next = 0;  // next: the next input character to take
  for (const Unit& unit : units) {
    const std::size_t len = unicode::utf8_length(static_cast<unsigned char>(text[at]));
    std::size_t source = next == 0 ? 0 : next - 1;  // an inserted character: the last taken
    if (unit.change <= 0) {
      source = std::min(next, sources.size() - 1);
      next += 1 + static_cast<std::size_t>(-unit.change);
    }
    out.append(std::string_view(text).substr(at, len), sources[source].first,
               sources[source].second);
    at += len;
  }
  return true;
}

}  // namespace

bool apply_unicode_form(NormalizerKind kind, const Text& in, Text& out) {
  if (is_ascii(in.s)) {
    out = in;
    return true;
  }
  if (!in.track) {
    out.s.clear();
    return unicode_normalize(in.s, kind, out.s);
  }
  // Tracked: normalize chunk by chunk so that each output byte knows its source chunk.
  std::size_t i = 0;
  std::string buffer;
  while (i < in.s.size()) {
    // A run of ASCII is copied in one piece: an ASCII character followed by another is a
    // chunk of its own that no form changes (one chunk per character cost half the encode
    // of chat prompts). The run's last character may start a chunk with the combining
    // marks after it, so it goes through the general path below.
    std::size_t k = i;
    while (k < in.s.size() && static_cast<unsigned char>(in.s[k]) < 0x80) ++k;
    if (k == in.s.size() && k > i) {
      out.append_from(in, i, k);
      break;
    }
    if (k > i + 1) {
      out.append_from(in, i, k - 1);
      i = k - 1;
    }
    std::size_t j = i;
    std::size_t len;
    unicode::decode_utf8(in.s, j, len);
    j += len;
    while (j < in.s.size()) {
      char32_t cp = unicode::decode_utf8(in.s, j, len);
      if (is_stable_boundary(cp)) break;
      j += len;
    }
    std::string_view chunk(in.s.data() + i, j - i);
    if (is_ascii(chunk)) {
      out.append_from(in, i, j);
    } else {
      buffer.clear();
      if (!unicode_normalize(chunk, kind, buffer)) return false;
      if (buffer == chunk) {
        out.append_from(in, i, j);
      } else if (!append_aligned(kind, in, i, j, buffer, out)) {
        out.append(buffer, in.begin[i], in.end[j - 1]);  // the chunk as one span
      }
    }
    i = j;
  }
  return true;
}

void apply_lowercase(const Text& in, Text& out) {
  std::size_t i = 0;
  std::string buf;
  while (i < in.s.size()) {
    unsigned char b = static_cast<unsigned char>(in.s[i]);
    if (b < 0x80) {
      char c = (b >= 'A' && b <= 'Z') ? static_cast<char>(b + 32) : static_cast<char>(b);
      out.s.push_back(c);
      if (in.track) {
        out.begin.push_back(in.begin[i]);
        out.end.push_back(in.end[i]);
      }
      ++i;
      continue;
    }
    std::size_t len;
    char32_t cp = unicode::decode_utf8(in.s, i, len);
    buf.clear();
    if (cp == 0x130) {  // Rust's char::to_lowercase: U+0130 -> "i\u0307"
      buf = "i\xCC\x87";
    } else {
      unicode::append_utf8(
          buf, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    }
    if (in.track) {
      out.append(buf, in.begin[i], in.end[i + len - 1]);
    } else {
      out.s += buf;
    }
    i += len;
  }
}

void apply_strip(const NormalizerStep& step, const Text& in, Text& out) {
  std::size_t b = 0, e = in.s.size();
  if (step.strip_left) {
    while (b < e) {
      std::size_t len;
      char32_t cp = unicode::decode_utf8(in.s, b, len);
      if (!unicode::is_white_space(cp)) break;
      b += len;
    }
  }
  if (step.strip_right) {
    while (e > b) {
      std::size_t start = e - 1;
      while (start > b && (static_cast<unsigned char>(in.s[start]) & 0xC0) == 0x80) --start;
      std::size_t len;
      char32_t cp = unicode::decode_utf8(in.s, start, len);
      if (!unicode::is_white_space(cp)) break;
      e = start;
    }
  }
  out.append_from(in, b, e);
}

void apply_strip_accents(const Text& in, Text& out) {
  std::size_t i = 0;
  while (i < in.s.size()) {
    std::size_t len;
    char32_t cp = unicode::decode_utf8(in.s, i, len);
    if (!unicode::is_mark(cp)) out.append_from(in, i, i + len);
    i += len;
  }
}

Result<bool> apply_replace(const NormalizerStep& step, const Text& in, Text& out,
                           SpanVector& matches) {
  matches.clear();
  if (!step.regex && step.pattern.size() == 1 && step.content.size() <= 4 && !in.track &&
      std::endian::native == std::endian::little) {
    // One byte to a short string (SentencePiece's " " -> U+2581): one pass that writes the
    // replacement or the byte, without a branch per byte (spaces are too frequent to predict).
    const char from = step.pattern[0];
    const std::size_t n = in.s.size();
    std::size_t count = 0, c = 0;
#if defined(__SSE2__)
    for (const __m128i needle = _mm_set1_epi8(from); c + 16 <= n; c += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in.s.data() + c));
      count += static_cast<std::size_t>(
          __builtin_popcount(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)))));
    }
#endif
    for (; c < n; ++c) count += in.s[c] == from;
    if (count == 0) {
      out.s.assign(in.s);
      return true;
    }
    const std::size_t grow = step.content.size() > 0 ? step.content.size() - 1 : 0;
    out.s.resize(n + count * grow + 16);  // slack for the 16- and 4-byte stores
    std::uint32_t word = 0;
    std::memcpy(&word, step.content.data(), step.content.size());
    char* o = out.s.data();
    const char* src = in.s.data();
    std::size_t at = 0, i = 0;
#if defined(__SSE2__)
    // 16 bytes at a time: copy the block, keep what precedes the first match, write the
    // replacement, go on after the match.
    const __m128i needle = _mm_set1_epi8(from);
    while (i + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o + at), v);
      if (mask == 0) {
        at += 16;
        i += 16;
        continue;
      }
      const auto before = static_cast<std::size_t>(__builtin_ctz(mask));
      at += before;
      std::memcpy(o + at, &word, 4);
      at += step.content.size();
      i += before + 1;
    }
#endif
    for (; i < n; ++i) {
      const bool hit = src[i] == from;
      const std::uint32_t plain = static_cast<unsigned char>(src[i]);
      const std::uint32_t w = hit ? word : plain;
      std::memcpy(o + at, &w, 4);
      at += hit ? step.content.size() : 1;
    }
    out.s.resize(at);
    return true;
  }
  if (step.regex) {
    auto r = step.regex->find_all(in.s, matches);
    if (!r) return r.error();
  } else if (!step.pattern.empty()) {
    std::size_t pos = 0;
    while ((pos = in.s.find(step.pattern, pos)) != std::string::npos) {
      matches.emplace_back(static_cast<std::uint32_t>(pos),
                           static_cast<std::uint32_t>(pos + step.pattern.size()));
      pos += step.pattern.size();
    }
  }
  std::size_t last = 0;
  for (auto [b, e] : matches) {
    out.append_from(in, last, b);
    if (e > b) {
      if (in.track) {
        // HF aligns the replacement to the match's last character (the removed characters
        // are dropped before it is inserted after the last of them).
        std::size_t last_char = e - 1;
        while (last_char > b && (static_cast<unsigned char>(in.s[last_char]) & 0xC0) == 0x80)
          --last_char;
        out.append(step.content, in.begin[last_char], in.end[e - 1]);
      } else {
        out.s += step.content;
      }
    } else if (!step.content.empty()) {
      // An empty match inserts the replacement: align it to the next character.
      std::uint32_t ob = in.track ? (b < in.s.size() ? in.begin[b] : (b ? in.end[b - 1] : 0)) : 0;
      std::uint32_t oe = in.track ? (b < in.s.size() ? in.end[b] : ob) : 0;
      out.append(step.content, ob, oe);
    }
    last = e;
  }
  out.append_from(in, last, in.s.size());
  return true;
}

void apply_prepend(const NormalizerStep& step, const Text& in, Text& out) {
  if (in.s.empty()) return;  // HF: nothing to prepend to
  if (in.track) {
    std::size_t len = unicode::utf8_length(static_cast<unsigned char>(in.s[0]));
    if (len > in.s.size()) len = in.s.size();
    out.append(step.content, in.begin[0], in.end[len - 1]);
  } else {
    out.s += step.content;
  }
  out.append_from(in, 0, in.s.size());
}

}  // namespace

void Text::assign(std::string_view original, std::uint32_t base, bool tracking) {
  s.assign(original);
  track = tracking;
  begin.clear();
  end.clear();
  if (tracking) {
    // Every byte maps to its whole character, so that tokens holding part of a character cover it.
    begin.resize(original.size());
    end.resize(original.size());
    std::size_t i = 0;
    while (i < original.size()) {
      std::size_t len = unicode::utf8_length(static_cast<unsigned char>(original[i]));
      if (i + len > original.size()) len = original.size() - i;
      for (std::size_t k = 0; k < len; ++k) {
        begin[i + k] = base + static_cast<std::uint32_t>(i);
        end[i + k] = base + static_cast<std::uint32_t>(i + len);
      }
      i += len;
    }
  }
}

Result<bool> normalize(const std::vector<NormalizerStep>& steps, Text& text, Text& scratch) {
  thread_local SpanVector matches;  // reused: encode normalizes every added-token segment
  for (const NormalizerStep& step : steps) {
    scratch.clear();
    scratch.track = text.track;
    switch (step.kind) {
      case NormalizerKind::kNfc:
      case NormalizerKind::kNfd:
      case NormalizerKind::kNfkc:
      case NormalizerKind::kNfkd:
        if (!apply_unicode_form(step.kind, text, scratch)) {
          return Error{"TokenizerError", "Unicode normalization failed (invalid UTF-8?)", 0, 0, {}};
        }
        break;
      case NormalizerKind::kLowercase:
        apply_lowercase(text, scratch);
        break;
      case NormalizerKind::kStrip:
        apply_strip(step, text, scratch);
        break;
      case NormalizerKind::kStripAccents:
        apply_strip_accents(text, scratch);
        break;
      case NormalizerKind::kReplace: {
        auto r = apply_replace(step, text, scratch, matches);
        if (!r) return r.error();
        break;
      }
      case NormalizerKind::kPrepend:
        apply_prepend(step, text, scratch);
        break;
    }
    std::swap(text, scratch);
  }
  return true;
}

Result<std::string> normalize_string(const std::vector<NormalizerStep>& steps, std::string_view s) {
  Text text, scratch;
  text.assign(s, 0, false);
  auto r = normalize(steps, text, scratch);
  if (!r) return r.error();
  return std::move(text.s);
}

}  // namespace chatwire::tokenize
