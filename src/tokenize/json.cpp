#include "tokenize/json.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tokenize/unicode.hpp"
#include "util/hex.hpp"

namespace chatwire::tokenize::json {

class Parser {
 public:
  Parser(Document& doc, std::string_view text, std::size_t max_depth)
      : doc_(doc), max_depth_(max_depth), begin_(text.data()), end_(text.data() + text.size()) {}

  bool run() {
    p_ = begin_;
    doc_.nodes_.reserve(std::min<std::size_t>(static_cast<std::size_t>(end_ - begin_) / 24 + 16,
                                              std::size_t{1} << 16));
    doc_.nodes_.emplace_back();
    skip_ws();
    if (!parse_value(0, 0)) return false;
    skip_ws();
    if (p_ != end_) return fail("unexpected data after the JSON value");
    return true;
  }

  Error error() const {
    // Line/column of the failure point.
    std::size_t line = 1, column = 1;
    for (const char* q = begin_; q < err_at_ && q < end_; ++q) {
      if (*q == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return Error{"TokenizerError", "invalid JSON: " + err_, line, column, {}};
  }

 private:
  bool fail(const char* message) {
    err_ = message;
    err_at_ = p_;
    return false;
  }

  static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#if defined(__SSE2__)
  // The bits of a 16-byte block at q: its JSON whitespace bytes, and the bytes that end a run of
  // plain string contents ('"', '\\' and control characters).
  static unsigned ws_bits(const char* q) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i ws = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
    return static_cast<unsigned>(_mm_movemask_epi8(ws));
  }
  static unsigned stop_bits(const char* q) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const __m128i stop = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F)));
    return static_cast<unsigned>(_mm_movemask_epi8(stop));
  }
#endif

  // The first byte at or after q that is not JSON whitespace (end_ if none), 16 bytes a step
  // (indented files: runs of spaces after each newline).
  const char* ws_end(const char* q) const {
    if (q >= end_ || !is_ws(*q)) return q;  // compact files: nothing to skip
#if defined(__SSE2__)
    while (end_ - q >= 16) {
      const unsigned other = ws_bits(q) ^ 0xFFFFu;
      if (other != 0) return q + __builtin_ctz(other);
      q += 16;
    }
#endif
    while (q < end_ && is_ws(*q)) ++q;
    return q;
  }
  void skip_ws() {
    p_ = ws_end(p_);
  }

  // The first '"', '\\' or control character at or after q (end_ if none), 16 bytes a step.
  const char* plain_end(const char* q) const {
#if defined(__SSE2__)
    while (end_ - q >= 16) {
      const unsigned stop = stop_bits(q);
      if (stop != 0) return q + __builtin_ctz(stop);
      q += 16;
    }
#endif
    while (q < end_ && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20) ++q;
    return q;
  }

  // After an opening bracket: whether the container is empty (then p_ is past its close).
  bool empty_container(char close) {
    skip_ws();
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    return false;
  }
  // A member name and its ':' at p_, p_ left at the value.
  bool member_name(std::string_view& key) {
    if (p_ >= end_ || *p_ != '"') return fail("expected a member name");
    if (!parse_string(key)) return false;
    skip_ws();
    if (p_ >= end_ || *p_ != ':') return fail("expected ':'");
    ++p_;
    skip_ws();
    return true;
  }
  // After a member or element: kMore at ',' (p_ at the next one), kEnd at `close` (p_ past it),
  // else an error (`expected` names what should have come).
  enum class After { kMore, kEnd, kError };
  After after_item(char close, const char* expected) {
    skip_ws();
    if (p_ >= end_) {
      fail("unexpected end of input");
      return After::kError;
    }
    if (*p_ == ',') {
      ++p_;
      skip_ws();
      return After::kMore;
    }
    if (*p_ == close) {
      ++p_;
      return After::kEnd;
    }
    fail(expected);
    return After::kError;
  }

  bool parse_value(std::uint32_t index, std::size_t depth) {
    if (p_ >= end_) return fail("unexpected end of input");
    switch (*p_) {
      case '{':
        return parse_container(index, depth, true);
      case '[':
        return parse_container(index, depth, false);
      case '"': {
        std::string_view s;
        if (!parse_string(s)) return false;
        doc_.nodes_[index].kind = Kind::kString;
        doc_.nodes_[index].text = s;
        return true;
      }
      case 't':
        return literal("true", Kind::kTrue, index);
      case 'f':
        return literal("false", Kind::kFalse, index);
      case 'n':
        return literal("null", Kind::kNull, index);
      default:
        return parse_number(index);
    }
  }

  bool literal(const char* word, Kind kind, std::uint32_t index) {
    std::size_t n = std::strlen(word);
    if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) {
      return fail("invalid literal");
    }
    p_ += n;
    doc_.nodes_[index].kind = kind;
    return true;
  }

  bool parse_number(std::uint32_t index) {
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ == digits) return fail("invalid value");
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      const char* frac = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == frac) return fail("invalid number");
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      const char* exp = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == exp) return fail("invalid number");
    }
    doc_.nodes_[index].kind = Kind::kNumber;
    doc_.nodes_[index].text = std::string_view(start, static_cast<std::size_t>(p_ - start));
    return true;
  }

  bool read_hex4(const char* q, char32_t& out) {
    if (end_ - q < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int h = util::hex_value(q[i]);
      if (h < 0) return false;
      out = (out << 4) | static_cast<char32_t>(h);
    }
    return true;
  }

  // The string at p_ (its opening quote). A string without escapes is a view into the text; one
  // with escapes is unescaped into the Document's blocks.
  bool parse_string(std::string_view& out) {
    ++p_;  // opening quote
    const char* start = p_;
    p_ = plain_end(p_);
    if (p_ < end_ && *p_ == '"') {
      out = std::string_view(start, static_cast<std::size_t>(p_ - start));
      ++p_;
      return true;
    }
    scratch_.assign(start, static_cast<std::size_t>(p_ - start));
    while (true) {
      if (p_ >= end_) return fail("unterminated string");
      char c = *p_;
      if (c == '"') {
        ++p_;
        break;
      }
      if (c != '\\') return fail("control character in string");
      if (end_ - p_ < 2) return fail("unterminated string");
      char e = p_[1];
      p_ += 2;
      switch (e) {
        case '"':
          scratch_ += '"';
          break;
        case '\\':
          scratch_ += '\\';
          break;
        case '/':
          scratch_ += '/';
          break;
        case 'b':
          scratch_ += '\b';
          break;
        case 'f':
          scratch_ += '\f';
          break;
        case 'n':
          scratch_ += '\n';
          break;
        case 'r':
          scratch_ += '\r';
          break;
        case 't':
          scratch_ += '\t';
          break;
        case 'u': {
          char32_t cp;
          if (!read_hex4(p_, cp)) return fail("invalid \\u escape");
          p_ += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            char32_t low;
            if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u' || !read_hex4(p_ + 2, low) ||
                low < 0xDC00 || low > 0xDFFF) {
              return fail("lone surrogate in \\u escape");
            }
            p_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return fail("lone surrogate in \\u escape");
          }
          unicode::append_utf8(scratch_, cp);
          break;
        }
        default:
          return fail("invalid escape in string");
      }
      const char* run = p_;
      p_ = plain_end(p_);
      scratch_.append(run, static_cast<std::size_t>(p_ - run));
    }
    char* stored = doc_.reserve_chars(scratch_.size());
    if (!scratch_.empty()) std::memcpy(stored, scratch_.data(), scratch_.size());
    out = std::string_view(stored, scratch_.size());
    return true;
  }

  // A value parsed into a scratch node (dropped afterwards), for the rare members of the flat
  // arrays that are not of the usual shape: the same syntax checks and errors as everywhere else.
  template <typename Inspect>
  bool parse_scratch(std::size_t depth, Inspect inspect) {
    const auto scratch = static_cast<std::uint32_t>(doc_.nodes_.size());
    doc_.nodes_.emplace_back();
    if (!parse_value(scratch, depth)) return false;
    inspect(scratch);
    doc_.nodes_.resize(scratch);
    return true;
  }

  // Opens a flat member at p_ (its bracket): the node marked flat, its entries reserved for the
  // text left; whether it is empty (then p_ is past its close).
  template <typename Entries>
  bool begin_flat(std::uint32_t index, Kind kind, Entries& entries, char close) {
    ++p_;
    doc_.nodes_[index].kind = kind;
    doc_.nodes_[index].flat = true;
    entries.reserve(std::min(static_cast<std::size_t>(end_ - p_) / 8 + 16, kMaxReserve));
    return empty_container(close);
  }

  // model.vocab, an object {"token": id, ...}, at p_ (its '{'): into Document::vocab_.
  bool parse_flat_vocab(std::uint32_t index) {
    if (begin_flat(index, Kind::kObject, doc_.vocab_, '}')) return true;
    std::size_t key_bytes = 0;
    After next = After::kMore;
    while (next == After::kMore) {
      std::string_view key;
      if (!member_name(key)) return false;
      VocabEntry e{key.data(), static_cast<std::uint32_t>(key.size()), false, 0};
      if (key.size() > 0xFFFFFFFFu) return fail("member name too long");
      key_bytes += key.size();
      const char* value = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ > value && (p_ >= end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E'))) {
        auto [ptr, ec] = std::from_chars(value, p_, e.id);
        e.id_ok = ec == std::errc() && ptr == p_;
      } else {
        p_ = value;
        if (!parse_scratch(3, [&](std::uint32_t n) { e.id_ok = as_uint(&doc_.nodes_[n], e.id); }))
          return false;
      }
      doc_.vocab_.push_back(e);
      next = after_item('}', "expected ',' or '}'");
    }
    if (next == After::kError) return false;
    doc_.nodes_[index].count =
        static_cast<std::uint32_t>(std::min<std::size_t>(doc_.vocab_.size(), 0xFFFFFFFFu));
    doc_.vocab_key_bytes_ = key_bytes;
    return true;
  }

  // The closing quote of a string without escapes or control characters whose contents start at
  // q, or nullptr.
  const char* plain_string_end(const char* q) const {
    q = plain_end(q);
    return q < end_ && *q == '"' ? q : nullptr;
  }
  // The first space of s (npos if none); a string in the text is read 16 bytes a step from its
  // start (a short one in one step), others bytewise.
  std::size_t first_space(std::string_view s) const {
    std::size_t i = 0;
#if defined(__SSE2__)
    if (s.data() >= begin_ && s.data() <= end_) {
      for (; end_ - (s.data() + i) >= 16 && i < s.size(); i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
        const auto hit =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
        if (hit != 0) {
          const std::size_t at = i + static_cast<std::size_t>(__builtin_ctz(hit));
          return at < s.size() ? at : std::string_view::npos;
        }
      }
    }
#endif
    for (; i < s.size(); ++i) {
      if (s[i] == ' ') return i;
    }
    return std::string_view::npos;
  }
  // The merge [a, b] into m, unless a part is too long for an entry.
  static bool pair_entry(std::string_view a, std::string_view b, MergeEntry& m) {
    if (a.size() > 0xFFFFFFFFu || b.size() > 0xFFFFFFFFu) return false;
    m = MergeEntry{a.data(), b.data(), static_cast<std::uint32_t>(a.size()),
                   static_cast<std::uint32_t>(b.size())};
    return true;
  }
  // [a, b] at p_ with two strings without escapes (nearly every merge): pointer steps only, and
  // no state touched unless it matches; quick_pair reads the rest.
  bool plain_pair(MergeEntry& m) {
    const char* q = ws_end(p_ + 1);
    if (q >= end_ || *q != '"') return false;
    const char* a = q + 1;
    const char* a_end = plain_string_end(a);
    if (a_end == nullptr) return false;
    q = ws_end(a_end + 1);
    if (q >= end_ || *q != ',') return false;
    q = ws_end(q + 1);
    if (q >= end_ || *q != '"') return false;
    const char* b = q + 1;
    const char* b_end = plain_string_end(b);
    if (b_end == nullptr) return false;
    q = ws_end(b_end + 1);
    if (q >= end_ || *q != ']') return false;
    if (!pair_entry({a, static_cast<std::size_t>(a_end - a)},
                    {b, static_cast<std::size_t>(b_end - b)}, m))
      return false;
    p_ = q + 1;
    return true;
  }

  // One merge given as [a, b] with nothing else: the usual shape, read without nodes.
  bool quick_pair(MergeEntry& m) {
    const char* at = p_;
    ++p_;
    skip_ws();
    std::string_view a, b;
    bool ok = p_ < end_ && *p_ == '"' && parse_string(a);
    if (ok) {
      skip_ws();
      ok = p_ < end_ && *p_ == ',';
    }
    if (ok) {
      ++p_;
      skip_ws();
      ok = p_ < end_ && *p_ == '"' && parse_string(b);
    }
    if (ok) {
      skip_ws();
      ok = p_ < end_ && *p_ == ']';
    }
    if (!ok || !pair_entry(a, b, m)) {
      p_ = at;
      err_.clear();
      return false;
    }
    ++p_;
    return true;
  }

  // model.merges, an array of "a b" strings or [a, b] pairs, at p_ (its '['): into
  // Document::merges_.
  bool parse_flat_merges(std::uint32_t index) {
    if (begin_flat(index, Kind::kArray, doc_.merges_, ']')) return true;
    After next = After::kMore;
    while (next == After::kMore) {
      MergeEntry m{nullptr, nullptr, 0, 0};
      if (p_ < end_ && *p_ == '"') {
        std::string_view s;
        if (!parse_string(s)) return false;
        if (s.size() > 0xFFFFFFFFu) return fail("string too long");
        // "a b" split at its first space here, while the string is in the cache; without one,
        // b stays nullptr and the loader reports it.
        const std::size_t space = first_space(s);
        if (space == std::string_view::npos) {
          m.a = s.data();
          m.a_len = static_cast<std::uint32_t>(s.size());
        } else {
          pair_entry(s.substr(0, space), s.substr(space + 1), m);
        }
      } else if (!(p_ < end_ && *p_ == '[' && (plain_pair(m) || quick_pair(m)))) {
        bool ok = parse_scratch(3, [&](std::uint32_t n) {
          const Node& c = doc_.nodes_[n];
          if (c.kind == Kind::kArray && c.count == 2 && is_string(&doc_.nodes_[c.first_child]) &&
              is_string(&doc_.nodes_[doc_.nodes_[c.first_child].next])) {
            pair_entry(doc_.nodes_[c.first_child].text,
                       doc_.nodes_[doc_.nodes_[c.first_child].next].text, m);
          }
        });
        if (!ok) return false;
      }
      doc_.merges_.push_back(m);
      next = after_item(']', "expected ',' or ']'");
    }
    if (next == After::kError) return false;
    doc_.nodes_[index].count =
        static_cast<std::uint32_t>(std::min<std::size_t>(doc_.merges_.size(), 0xFFFFFFFFu));
    return true;
  }

  bool parse_container(std::uint32_t index, std::size_t depth, bool is_object) {
    if (depth >= max_depth_) return fail("nesting deeper than max_json_depth");
    ++p_;
    doc_.nodes_[index].kind = is_object ? Kind::kObject : Kind::kArray;
    const char close = is_object ? '}' : ']';
    // The members of the root's "model" object that hold the vocabulary and the merges (the first
    // of each) are read flat, when the depth limit leaves room for what they hold.
    const bool model =
        is_object && depth == 1 && doc_.nodes_[index].key == "model" && max_depth_ > 4;
    if (empty_container(close)) return true;
    std::uint32_t previous = 0;
    std::uint32_t count = 0;
    After next = After::kMore;
    while (next == After::kMore) {
      std::string_view key;
      if (is_object && !member_name(key)) return false;
      if (doc_.nodes_.size() >= 0xFFFFFFF0u) return fail("too many values");
      auto child = static_cast<std::uint32_t>(doc_.nodes_.size());
      doc_.nodes_.emplace_back();
      doc_.nodes_[child].key = key;
      if (previous == 0) {
        doc_.nodes_[index].first_child = child;
      } else {
        doc_.nodes_[previous].next = child;
      }
      previous = child;
      ++count;
      bool ok;
      if (model && key == "vocab" && !flat_vocab_ && p_ < end_ && *p_ == '{') {
        flat_vocab_ = true;
        ok = parse_flat_vocab(child);
      } else if (model && key == "merges" && !flat_merges_ && p_ < end_ && *p_ == '[') {
        flat_merges_ = true;
        ok = parse_flat_merges(child);
      } else {
        ok = parse_value(child, depth + 1);
      }
      if (!ok) return false;
      next = after_item(close, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    if (next == After::kError) return false;
    doc_.nodes_[index].count = count;
    return true;
  }

  // Entries reserved up front at most (address space: an entry takes at least 6 bytes of text, so
  // the reservation follows the text left, within this bound; more still fit, by growth).
  static constexpr std::size_t kMaxReserve = std::size_t{1} << 22;
  Document& doc_;
  std::size_t max_depth_;
  const char* begin_;
  const char* end_;
  const char* p_ = nullptr;
  const char* err_at_ = nullptr;
  std::string err_;
  std::string scratch_;  // an escaped string being unescaped
  bool flat_vocab_ = false, flat_merges_ = false;
};

char* Document::reserve_chars(std::size_t n) {
  if (n > block_left_) {
    const std::size_t size = std::max<std::size_t>(n, std::size_t{64} << 10);
    blocks_.push_back(std::make_unique<char[]>(size));
    block_at_ = blocks_.back().get();
    block_left_ = size;
  }
  char* out = block_at_;
  block_at_ += n;
  block_left_ -= n;
  return out;
}

Result<Document> Document::parse(std::string_view text, std::size_t max_depth) {
  Document doc;
  Parser parser(doc, text, max_depth);
  if (!parser.run()) return parser.error();
  return doc;
}

const Node* Document::get(const Node& object, std::string_view key) const {
  if (object.kind != Kind::kObject) return nullptr;
  for (const Node* c = first(object); c; c = next(*c)) {
    if (c->key == key) return c;
  }
  return nullptr;
}

bool is_string(const Node* n) {
  return n && n->kind == Kind::kString;
}

bool as_bool(const Node* n, bool fallback) {
  if (!n) return fallback;
  if (n->kind == Kind::kTrue) return true;
  if (n->kind == Kind::kFalse) return false;
  return fallback;
}

bool as_uint(const Node* n, std::uint64_t& out) {
  if (!n || n->kind != Kind::kNumber) return false;
  auto [ptr, ec] = std::from_chars(n->text.data(), n->text.data() + n->text.size(), out);
  return ec == std::errc() && ptr == n->text.data() + n->text.size();
}

bool as_int(const Node* n, std::int64_t& out) {
  if (!n || n->kind != Kind::kNumber) return false;
  auto [ptr, ec] = std::from_chars(n->text.data(), n->text.data() + n->text.size(), out);
  return ec == std::errc() && ptr == n->text.data() + n->text.size();
}

}  // namespace chatwire::tokenize::json
