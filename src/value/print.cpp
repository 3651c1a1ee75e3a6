// Python str() and repr() of values, written straight into the caller's buffer.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <vector>

#include "chatwire/value_print.hpp"
#include "value/internal.hpp"
#include "value/scan.hpp"

namespace chatwire {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Nesting depth of the container reprs under way on this thread, for the reprs that go
// through Object::repr (a namespace holding a list holding the namespace), which calls back
// into append_repr. Within one call the writer below passes the depth down instead.
thread_local std::size_t repr_depth = 0;

std::vector<const std::pair<Value, Value>*> pprint_sorted_entries(const Value& dict);

[[noreturn, gnu::noinline, gnu::cold]] void throw_repr_recursion() {
  throw NestingError{make_error(
      "RecursionError", "maximum recursion depth exceeded while getting the repr of an object")};
}

// Python's repr recurses once per nesting level and raises RecursionError near its recursion
// limit; a list nested a million deep would otherwise overflow the C++ stack. append_repr has
// no error channel (it is the hot path of every print), so the error is thrown as
// NestingError and the engine returns it from render.
struct ReprDepthGuard {
  ReprDepthGuard() {
    if (repr_depth >= kMaxValueNesting) throw_repr_recursion();
    ++repr_depth;
  }
  ~ReprDepthGuard() { --repr_depth; }
  ReprDepthGuard(const ReprDepthGuard&) = delete;
  ReprDepthGuard& operator=(const ReprDepthGuard&) = delete;
};

// Bytes a string's repr does not copy as they are: control bytes, DEL, every byte of a
// non-ASCII character, the backslash and both quotes (which quote encloses the string is
// only decided once one is seen). Zero bytes count, which lets a short tail padded with
// zeros stop at its end.
#if defined(__SSE2__)
inline unsigned repr_special16(__m128i v) {
  // Signed compare: bytes >= 0x80 are negative, so `< 0x20` flags them with the controls.
  __m128i bad = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F)));
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('\'')));
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  return static_cast<unsigned>(_mm_movemask_epi8(bad));
}
#else
// Eight bytes as one word: 0x80 is set in the lane of the first such byte and in no lane
// below it (borrows only move upwards from a flagged lane), so on a little-endian machine
// the lowest set bit locates it.
inline std::uint64_t repr_special8(std::uint64_t w) {
  constexpr std::uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
  auto zero_lanes = [](std::uint64_t x) { return (x - k01) & ~x; };
  const std::uint64_t bad = ((w - k01 * 0x20) & ~w) | w | zero_lanes(w ^ (k01 * 0x7F)) |
                            zero_lanes(w ^ (k01 * '\\')) | zero_lanes(w ^ (k01 * '\'')) |
                            zero_lanes(w ^ (k01 * '"'));
  return bad & k80;
}
#endif

// Copies the bytes of [in, stop) before the first one repr_special flags and advances `in`
// to it. Blocks are stored whole into the room reserved for them (16 bytes of slack past
// stop - in); the cursor then moves only past the plain bytes.
[[gnu::always_inline]] inline char* copy_plain(const char*& in, const char* stop, char* out) {
#if defined(__SSE2__)
  return scan::copy_unflagged(in, stop, out, repr_special16);
#else
  if constexpr (std::endian::native == std::endian::little) {
    while (stop - in >= 8) {
      std::uint64_t w;
      std::memcpy(&w, in, 8);
      std::memcpy(out, &w, 8);
      if (std::uint64_t bad = repr_special8(w)) {
        auto k = static_cast<std::size_t>(std::countr_zero(bad) >> 3);
        in += k;
        return out + k;
      }
      in += 8;
      out += 8;
    }
  }
  while (in < stop) {
    auto b = static_cast<unsigned char>(*in);
    if (b < 0x20 || b >= 0x7F || b == '\\' || b == '\'' || b == '"') break;
    *out++ = *in++;
  }
  return out;
#endif
}

char* put_hex(char* p, char32_t c, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) *p++ = kHex[(c >> shift) & 0xF];
  return p;
}

char* put_utf8(char* p, char32_t cp) {
  if (cp < 0x80) {
    *p++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *p++ = static_cast<char>(0xC0 | (cp >> 6));
    *p++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *p++ = static_cast<char>(0xE0 | (cp >> 12));
    *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *p++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *p++ = static_cast<char>(0xF0 | (cp >> 18));
    *p++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *p++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *p++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return p;
}

// Python's float repr (float_repr_style 'short') at p; at most 24 bytes.
char* put_float_repr(char* p, double d) {
  auto literal = [&](std::string_view s) {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
  };
  if (std::isnan(d)) return literal("nan");
  if (std::isinf(d)) return literal(d < 0 ? "-inf" : "inf");
  if (d == 0.0) return literal(std::signbit(d) ? "-0.0" : "0.0");
  // Shortest round-trip digits, then Python's layout rule: fixed notation when
  // -4 < decimal exponent <= 16, else scientific.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const char* s = buf;
  if (*s == '-') {
    *p++ = '-';
    ++s;
  }
  const char* e = std::find(s, static_cast<const char*>(res.ptr), 'e');
  char digits[24];
  int ndigits = 0;
  for (const char* q = s; q != e; ++q)
    if (*q != '.') digits[ndigits++] = *q;
  int exponent = 0;
  std::from_chars(e + 1 + (e[1] == '+'), res.ptr, exponent);
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  auto put_digits = [&](int from, int to) {
    std::memcpy(p, digits + from, static_cast<std::size_t>(to - from));
    p += to - from;
  };
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      *p++ = '0';
      *p++ = '.';
      for (int k = decpt; k < 0; ++k) *p++ = '0';
      put_digits(0, ndigits);
    } else if (decpt >= ndigits) {
      put_digits(0, ndigits);
      for (int k = ndigits; k < decpt; ++k) *p++ = '0';
      *p++ = '.';
      *p++ = '0';
    } else {
      put_digits(0, decpt);
      *p++ = '.';
      put_digits(decpt, ndigits);
    }
  } else {
    *p++ = digits[0];
    if (ndigits > 1) {
      *p++ = '.';
      put_digits(1, ndigits);
    }
    int x = decpt - 1;
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    if (x < 10) *p++ = '0';
    p = std::to_chars(p, p + 8, x).ptr;
  }
  return p;
}

// repr() of a value tree written through a cursor over `out`: the string is resized ahead
// of the writes and cut back to what was written when the writer goes away, so a write is
// a store through a pointer rather than an append that checks size and capacity per piece.
// Every write has kSlack bytes of room after it, which lets short copies move whole
// 16-byte blocks. Sorted: pprint's _safe_repr, dict keys in pprint's order.
class ReprWriter {
 public:
  static constexpr std::size_t kSlack = 16;
  // The first room for a container: a tool definition's repr, the common one, takes a few
  // hundred bytes; growing costs a reallocation and a copy, the room only a memset.
  static constexpr std::size_t kContainerHint = 512;

  ReprWriter(std::string& out, std::size_t hint) : out_(out), start_(out.size()) { attach(hint); }
  ~ReprWriter() {
    if (!detached_) out_.resize(size());
  }
  ReprWriter(const ReprWriter&) = delete;
  ReprWriter& operator=(const ReprWriter&) = delete;

  template <bool Sorted>
  void value(const Value& v, std::size_t depth) {
    switch (v.kind()) {
      case Kind::String:
        if (v.is_markup()) return markup_string(v.as_string(), false);
        return string(v.as_string());
      case Kind::Int:
        reserve(24);
        p_ = std::to_chars(p_, p_ + 24, v.as_int()).ptr;
        return;
      case Kind::None:
        return put("None");
      case Kind::Bool:
        return v.as_bool() ? put("True") : put("False");
      case Kind::Float:
        reserve(32);
        p_ = put_float_repr(p_, v.as_float());
        return;
      case Kind::List:
      case Kind::Tuple:
        return sequence<Sorted>(v, depth);
      case Kind::Dict:
        return mapping<Sorted>(v, depth);
      default:  // Undefined, Object: append_repr's own cases
        return delegate(v, depth);
    }
  }

  // Python's unicode_repr: the quote, then the text with what is not printable escaped.
  // With `comma` the item separator goes before it and with `colon` the key separator
  // after it, under the same reserve.
  [[gnu::always_inline]] void string(std::string_view s, bool comma = false, bool colon = false) {
    reserve(s.size() + 6);
    // The cursor in a local: stores through char* could alias p_, which would make the
    // compiler reload it after each one.
    char* p = p_;
    if (comma) {
      std::memcpy(p, ", ", 2);
      p += 2;
    }
    char* open = p;
    *p++ = '\'';
    const char* in = s.data();
    const char* const stop = in + s.size();
    p = copy_plain(in, stop, p);
    char quote = '\'';
    if (in != stop) {
      p_ = p;
      quote = escaped_rest(s, in, open);
      reserve(3);
      p = p_;
    }
    *p++ = quote;
    if (colon) {
      std::memcpy(p, ": ", 2);
      p += 2;
    }
    p_ = p;
  }

  // Markup's own __repr__: Markup('...').
  [[gnu::noinline]] void markup_string(std::string_view s, bool comma) {
    if (comma) put(", ");
    put("Markup(");
    string(s);
    put(")");
  }

 private:
  std::string& out_;
  std::size_t start_;
  char* p_ = nullptr;
  char* end_ = nullptr;
  bool detached_ = false;

  std::size_t size() const { return static_cast<std::size_t>(p_ - out_.data()); }

  void attach(std::size_t hint) {
    std::size_t used = out_.size();
    out_.resize(used + hint + kSlack);
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  // Room for n more bytes plus the slack.
  void reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n + kSlack) grow(n + kSlack);
  }

  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t used = size();
    out_.resize(used);  // the bytes past the cursor need no copying
    // Doubling what this writer wrote (at least 256 more): a tool list outgrows the first
    // guess a few times, and each reallocation copies what was written.
    out_.resize(used + std::max(n, used - start_ + 256));
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  template <std::size_t N>
  void put(const char (&literal)[N]) {
    reserve(N);
    std::memcpy(p_, literal, N - 1);
    p_ += N - 1;
  }

  // Undefined and Object print through append_repr, with the string cut back to what was
  // written; an Object's repr sees this depth through repr_depth.
  [[gnu::noinline]] void delegate(const Value& v, std::size_t depth) {
    out_.resize(size());
    detached_ = true;
    struct Restore {
      std::size_t saved = repr_depth;
      ~Restore() { repr_depth = saved; }
    } restore;
    repr_depth = depth;
    append_repr(out_, v);
    detached_ = false;
    attach(kContainerHint);
  }

  void enter(std::size_t depth) {
    if (depth >= kMaxValueNesting) throw_repr_recursion();
  }

  // A container's item: strings, the common leaf, are written here rather than through
  // value(), whose call costs more than a short string.
  template <bool Sorted>
  [[gnu::always_inline]] void item(const Value& v, std::size_t depth, bool comma) {
    if (v.kind() == Kind::String && !v.is_markup()) return string(v.as_string(), comma);
    if (comma) put(", ");
    value<Sorted>(v, depth);
  }

  template <bool Sorted>
  void sequence(const Value& v, std::size_t depth) {
    enter(depth);
    const bool is_list = v.is_list();
    auto items = v.as_list();
    reserve(1);
    *p_++ = is_list ? '[' : '(';
    for (std::size_t i = 0; i < items.size(); ++i) item<Sorted>(items[i], depth + 1, i != 0);
    if (is_list)
      put("]");
    else if (items.size() == 1)
      put(",)");
    else
      put(")");
  }

  template <bool Sorted>
  void entry(const std::pair<Value, Value>& e, bool first, std::size_t depth) {
    if (e.first.kind() == Kind::String && !e.first.is_markup()) {
      string(e.first.as_string(), !first, true);
    } else {
      if (!first) put(", ");
      value<Sorted>(e.first, depth);
      put(": ");
    }
    item<Sorted>(e.second, depth, false);
  }

  template <bool Sorted>
  void mapping(const Value& v, std::size_t depth) {
    enter(depth);
    put("{");
    if constexpr (Sorted) {
      bool first = true;
      for (const auto* e : pprint_sorted_entries(v)) {
        entry<Sorted>(*e, first, depth + 1);
        first = false;
      }
    } else {
      auto entries = v.dict_entries();
      for (std::size_t i = 0; i < entries.size(); ++i) entry<Sorted>(entries[i], i == 0, depth + 1);
    }
    put("}");
  }

  // The rest of a string from the first byte copy_plain stopped at, `in`; writes the
  // enclosing quote at `open` and returns it. Out of line: most strings need no escape.
  [[gnu::noinline]] char escaped_rest(std::string_view s, const char* in, char* open) {
    const char* const stop = s.data() + s.size();
    // The bytes before `in` hold no quote, so the rest decides: '"' only when there is a
    // single quote and no double quote (Python's rule).
    const auto rest = static_cast<std::size_t>(stop - in);
    const bool has_single = std::memchr(in, '\'', rest) != nullptr;
    const bool has_double = std::memchr(in, '"', rest) != nullptr;
    const char quote = has_single && !has_double ? '"' : '\'';
    *open = quote;  // before any reserve: `open` points into the current buffer
    do {
      // At most 10 bytes for this character, then the rest as it is and the quote.
      reserve(static_cast<std::size_t>(stop - in) + 11);
      char* p = p_;
      auto b = static_cast<unsigned char>(*in);
      if (b < 0x80) {
        ++in;
        if (b == static_cast<unsigned char>(quote) || b == '\\') {
          p[0] = '\\';
          p[1] = static_cast<char>(b);
          p += 2;
        } else if (b == '\'' || b == '"') {  // the other quote
          *p++ = static_cast<char>(b);
        } else if (b == '\t' || b == '\n' || b == '\r') {
          p[0] = '\\';
          p[1] = b == '\t' ? 't' : b == '\n' ? 'n' : 'r';
          p += 2;
        } else {  // other controls and DEL
          p[0] = '\\';
          p[1] = 'x';
          p = put_hex(p + 2, b, 2);
        }
      } else {
        auto i = static_cast<std::size_t>(in - s.data());
        char32_t c = utf8::decode(s, i);
        in = s.data() + i;
        if (unicode::is_printable(c)) {
          // Re-encoded rather than copied: a malformed byte decodes as itself (U+0080..U+00FF).
          p = put_utf8(p, c);
        } else {
          p[0] = '\\';
          if (c <= 0xFF) {
            p[1] = 'x';
            p = put_hex(p + 2, c, 2);
          } else if (c <= 0xFFFF) {
            p[1] = 'u';
            p = put_hex(p + 2, c, 4);
          } else {
            p[1] = 'U';
            p = put_hex(p + 2, c, 8);
          }
        }
      }
      p_ = copy_plain(in, stop, p);
    } while (in != stop);
    return quote;
  }
};

}  // namespace

void append_float_repr(std::string& out, double d) {
  char buf[32];
  out.append(buf, put_float_repr(buf, d));
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      out += "Undefined";
      return;
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += v.as_bool() ? "True" : "False";
      return;
    case Kind::Int: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, v.as_int());
      out.append(buf, res.ptr);
      return;
    }
    case Kind::Float:
      append_float_repr(out, v.as_float());
      return;
    case Kind::String: {
      ReprWriter writer(out, v.as_string().size() + 14);  // string()'s reserve
      if (v.is_markup())
        writer.markup_string(v.as_string(), false);
      else
        writer.string(v.as_string());
      return;
    }
    case Kind::List:
    case Kind::Tuple:
    case Kind::Dict: {
      ReprWriter writer(out, ReprWriter::kContainerHint);
      writer.value<false>(v, repr_depth);
      return;
    }
    case Kind::Object: {
      ReprDepthGuard guard;
      v.as_object()->repr(out);
      return;
    }
  }
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return;
    case Kind::String:
      out += v.as_string();
      return;
    case Kind::Object: {
      ReprDepthGuard guard;
      v.as_object()->str(out);
      return;
    }
    default:
      append_repr(out, v);
  }
}

std::string to_str(const Value& v) {
  std::string s;
  append_str(s, v);
  return s;
}

std::string to_repr(const Value& v) {
  std::string s;
  append_repr(s, v);
  return s;
}

// ---------------------------------------------------------------------------------
// pprint.pformat (Python 3.11 Lib/pprint.py, width=80, indent=1, sort_dicts=True)
// ---------------------------------------------------------------------------------

namespace {

constexpr std::size_t kPprintWidth = 80;

// pprint's dict order: sorted(items, key=_safe_tuple). Keys of one orderable kind compare
// with `<`; where `<` raises, _safe_key orders by the type's name (then by id(), which is
// arbitrary in Python: insertion order here). stable_sort stays in bounds even if that
// fallback is not a strict weak order.
std::vector<const std::pair<Value, Value>*> pprint_sorted_entries(const Value& dict) {
  std::vector<const std::pair<Value, Value>*> entries;
  entries.reserve(dict.dict_size());
  for (const auto& entry : dict.dict_entries()) entries.push_back(&entry);
  std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
    auto less = compare(CompareOp::Lt, a->first, b->first);
    if (less) return *less;
    return type_name(a->first) < type_name(b->first);
  });
  return entries;
}

// pprint's _safe_repr: repr() with dict keys sorted, all the way down.
std::string safe_repr(const Value& v) {
  std::string s;
  ReprWriter writer(s, ReprWriter::kContainerHint);
  writer.value<true>(v, repr_depth);
  return s;
}

std::size_t width_of(std::string_view s) {
  return utf8::code_points(s);
}

// str.splitlines(keepends=True) with Python's line boundaries.
std::vector<std::string_view> split_lines_keepends(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0, i = 0;
  while (i < s.size()) {
    std::size_t at = i;
    char32_t c = utf8::decode(s, i);
    if (!unicode::is_linebreak(c)) continue;
    if (c == '\r' && i < s.size() && s[i] == '\n') ++i;
    lines.push_back(s.substr(start, i - start));
    start = i;
    (void)at;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

// re.findall(r'\S*\s*', line) without the final empty match: runs of non-space followed
// by their spaces.
std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t start = i;
    auto run = [&](bool space) {
      while (i < line.size()) {
        std::size_t next = i;
        char32_t c = utf8::decode(line, next);
        if (unicode::is_space(c) != space) break;
        i = next;
      }
    };
    run(false);
    run(true);
    parts.push_back(line.substr(start, i - start));
  }
  return parts;
}

std::string string_repr(std::string_view s) {
  return to_repr(make_string(std::string(s)));
}

struct PrettyPrinter {
  std::string& out;

  void format(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    std::string rep = safe_repr(v);
    std::size_t used = indent + allowance;
    std::size_t max_width = used < kPprintWidth ? kPprintWidth - used : 0;
    if (width_of(rep) > max_width && !v.is_markup()) {  // Markup has its own __repr__
      switch (v.kind()) {
        case Kind::List:
        case Kind::Tuple:
        case Kind::Dict:
        case Kind::String: {
          ReprDepthGuard guard;
          if (v.is_dict())
            pprint_dict(v, indent, allowance, level + 1);
          else if (v.is_string())
            pprint_str(v.as_string(), indent, allowance, level + 1);
          else
            pprint_sequence(v, indent, allowance, level + 1);
          return;
        }
        default:
          break;
      }
    }
    out += rep;
  }

  void pprint_dict(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    out += '{';
    if (v.dict_size()) {
      auto entries = pprint_sorted_entries(v);
      indent += 1;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        bool last = i + 1 == entries.size();
        std::string rep = safe_repr(entries[i]->first);
        out += rep;
        out += ": ";
        format(entries[i]->second, indent + width_of(rep) + 2, last ? allowance + 1 : 1, level);
        if (!last) {
          out += ",\n";
          out.append(indent, ' ');
        }
      }
    }
    out += '}';
  }

  void pprint_sequence(const Value& v, std::size_t indent, std::size_t allowance, int level) {
    auto items = v.as_list();
    std::string_view end = v.is_list() ? "]" : items.size() == 1 ? ",)" : ")";
    out += v.is_list() ? '[' : '(';
    allowance += end.size();
    indent += 1;
    for (std::size_t i = 0; i < items.size(); ++i) {
      bool last = i + 1 == items.size();
      if (i) {
        out += ",\n";
        out.append(indent, ' ');
      }
      format(items[i], indent, last ? allowance : 1, level);
    }
    out += end;
  }

  void pprint_str(std::string_view s, std::size_t indent, std::size_t allowance, int level) {
    if (level == 1) {
      indent += 1;
      allowance += 1;
    }
    std::size_t max_width = indent < kPprintWidth ? kPprintWidth - indent : 0;
    std::size_t max_width1 = max_width;
    std::vector<std::string> chunks;
    auto lines = split_lines_keepends(s);
    std::string rep;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      rep = string_repr(lines[i]);
      bool last_line = i + 1 == lines.size();
      if (last_line) max_width1 = max_width1 > allowance ? max_width1 - allowance : 0;
      if (width_of(rep) <= max_width1) {
        chunks.push_back(rep);
        continue;
      }
      auto parts = split_words(lines[i]);
      std::size_t max_width2 = max_width;
      std::string current;
      for (std::size_t j = 0; j < parts.size(); ++j) {
        std::string candidate = current + std::string(parts[j]);
        if (j + 1 == parts.size() && last_line)
          max_width2 = max_width2 > allowance ? max_width2 - allowance : 0;
        if (width_of(string_repr(candidate)) > max_width2) {
          if (!current.empty()) chunks.push_back(string_repr(current));
          current = std::string(parts[j]);
        } else {
          current = std::move(candidate);
        }
      }
      if (!current.empty()) chunks.push_back(string_repr(current));
    }
    if (chunks.size() == 1) {
      out += rep;  // Python writes the last line's repr here
      return;
    }
    if (level == 1) out += '(';
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (i) {
        out += '\n';
        out.append(indent, ' ');
      }
      out += chunks[i];
    }
    if (level == 1) out += ')';
  }
};

}  // namespace

void append_pformat(std::string& out, const Value& v) {
  PrettyPrinter printer{out};
  printer.format(v, 0, 0, 0);
}

}  // namespace chatwire
